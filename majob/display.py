"""How majob's values show themselves in a notebook, without knowing the notebook.

``Job``, ``RunResult``, ``StageResult`` and ``PipelineResult`` live low in the layers; what draws
them (HTML tables, metric frames, plots: ``majob.notebook``) lives above them. So a value hands
each view to this registry, in one line::

    def _repr_html_(self) -> str | None:
        return display.html(self)

and the presentation side registers, per class, the functions that draw it. The façade
(``majob/__init__.py``) installs a loader that imports the presentation module the first time a
view is asked for: nothing is imported to draw until something is drawn. Plain ``repr`` stays on
each class (it is text, and needed everywhere): ``seconds`` is the piece those reprs share.

This module imports nothing of majob.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Draw = Callable[..., Any]


@dataclass(frozen=True)
class Views:
    """What the presentation side draws for one class; None: that view is not offered."""

    html: Callable[[Any], str] | None = None
    metrics: Draw | None = None  # the metric series as a table
    plot: Draw | None = None  # the metric series drawn


_registry: dict[type, Views] = {}
_loader: Callable[[], None] | None = None


def register(cls: type, views: Views) -> None:
    """Draw instances of ``cls`` (and its subclasses) with ``views``."""
    _registry[cls] = views


def load_with(loader: Callable[[], None]) -> None:
    """Call ``loader`` (once) before the first view is looked up: it registers the renderers."""
    global _loader
    _loader = loader


def _views(obj: object) -> Views:
    global _loader
    if _loader is not None:
        loader, _loader = _loader, None
        loader()
    for cls in type(obj).__mro__:
        if cls in _registry:
            return _registry[cls]
    return Views()


def html(obj: object) -> str | None:
    """``obj`` as HTML; None (Jupyter then shows its ``repr``) when no renderer is registered."""
    draw = _views(obj).html
    return draw(obj) if draw is not None else None


def metrics(obj: object, *args: Any, **kwargs: Any) -> Any:
    """``obj``'s metric series as a table (``Job.metrics``, ``StageResult.metrics``)."""
    return _drawn(obj, "metrics", _views(obj).metrics, args, kwargs)


def plot(obj: object, *args: Any, **kwargs: Any) -> Any:
    """``obj``'s metric series drawn (``Job.plot``, ``StageResult.plot``)."""
    return _drawn(obj, "plot", _views(obj).plot, args, kwargs)


def _drawn(
    obj: object, view: str, draw: Draw | None, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    if draw is None:
        raise LookupError(f"no {view} view is registered for {type(obj).__name__}")
    return draw(obj, *args, **kwargs)


def seconds(value: float | None) -> str:
    """A duration as a repr shows it: ``3.2s``, ``1m05s``; ``-`` when unknown."""
    if value is None:
        return "-"
    if value < 60:
        return f"{value:.1f}s"
    minutes, rest = divmod(int(value), 60)
    return f"{minutes}m{rest:02d}s"
