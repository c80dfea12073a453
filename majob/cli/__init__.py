"""The ``majob`` command line: a thin Typer shell over the façade."""
