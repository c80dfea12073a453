"""Ctrl-C during a sweep: the sweep says how to go on, and the trials keep running."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

_CONTEXTS_SEARCHED = 8  # errors raised while handling others, followed back to a Ctrl-C


@contextmanager
def ctrl_c_kept() -> Iterator[None]:
    """A Ctrl-C stays a Ctrl-C. One that lands in a library's cleanup can come out as another
    error, raised while the library handled it: optuna's journal lock, interrupted between its
    rename and its unlink, unlinks again and raises FileNotFoundError. Such an error is raised
    as the KeyboardInterrupt it hides, so the sweep says how to go on and exits 130."""
    try:
        yield
    except Exception as error:
        context = error.__context__
        for _ in range(_CONTEXTS_SEARCHED):
            if context is None or isinstance(context, KeyboardInterrupt):
                break
            context = context.__context__
        if not isinstance(context, KeyboardInterrupt):
            raise
        raise KeyboardInterrupt from error
