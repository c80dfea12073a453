"""Sweeps: many trials of one spec, searched by Optuna, each trial a job on ModelArts.

``store`` keeps the sweeps (an Optuna study each, in ``.majob/sweeps.journal`` beside the ledger),
``space`` turns a ``sweep:`` block into a trial's spec, ``trial`` follows one trial's job and
prunes it, ``run`` is the loop (``majob.Sweep``), ``results`` the table, best spec and plot.
"""
