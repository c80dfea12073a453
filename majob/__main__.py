"""``python -m majob`` runs the CLI."""

from majob.cli.app import main

main()
