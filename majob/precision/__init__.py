"""Precision verification: dump a run with msprobe (``--dump``) and compare two runs."""
