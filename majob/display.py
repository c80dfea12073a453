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
from typing import Any

Draw = Callable[..., Any]

# class -> view name (html, metrics, plot) -> what draws it. A plain dict, not a dataclass:
# ``import majob`` imports this module, and dataclasses would cost it more than all the rest.
_registry: dict[type, dict[str, Draw]] = {}
_loader: Callable[[], None] | None = None


def register(
    cls: type,
    *,
    html: Callable[[Any], str] | None = None,
    metrics: Draw | None = None,
    plot: Draw | None = None,
) -> None:
    """Draw instances of ``cls`` (and its subclasses): ``html`` for Jupyter's display,
    ``metrics`` for the metric series as a table, ``plot`` for them drawn."""
    views = {"html": html, "metrics": metrics, "plot": plot}
    _registry[cls] = {name: draw for name, draw in views.items() if draw is not None}


def load_with(loader: Callable[[], None]) -> None:
    """Call ``loader`` (once) before the first view is looked up: it registers the renderers."""
    global _loader
    _loader = loader


def _draw(obj: object, view: str) -> Draw | None:
    global _loader
    if _loader is not None:
        loader, _loader = _loader, None
        loader()
    for cls in type(obj).__mro__:
        if cls in _registry:
            return _registry[cls].get(view)
    return None


def html(obj: object) -> str | None:
    """``obj`` as HTML; None (Jupyter then shows its ``repr``) when no renderer is registered."""
    draw = _draw(obj, "html")
    return str(draw(obj)) if draw is not None else None


def metrics(obj: object, *args: Any, **kwargs: Any) -> Any:
    """``obj``'s metric series as a table (``Job.metrics``, ``StageResult.metrics``)."""
    return _drawn(obj, "metrics", args, kwargs)


def plot(obj: object, *args: Any, **kwargs: Any) -> Any:
    """``obj``'s metric series drawn (``Job.plot``, ``StageResult.plot``)."""
    return _drawn(obj, "plot", args, kwargs)


def _drawn(obj: object, view: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    draw = _draw(obj, view)
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
