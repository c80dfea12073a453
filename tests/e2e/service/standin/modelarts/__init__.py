"""A strict stand-in for the ModelArts notebook SDK (``modelarts``, not on PyPI).

Its classes take exactly the arguments of the shared reference modelarts.md §1 (an unknown
keyword is a ``TypeError``, as with the real classes) and forward to the running emulator
through the official REST client: ``Estimator.fit`` turns its arguments into the REST v2 body
the reference maps them to.
"""
