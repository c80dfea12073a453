"""The staged pipeline local → debug → formal: ledger, gates, metrics, expect checks."""
