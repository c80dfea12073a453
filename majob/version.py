"""majob's version: what the ledger records with each stage and ``majob --version`` prints."""

__version__ = "0.1.0"
