"""A Chrome trace read as a stream of events, in bounded memory.

Two shapes are read: torch.profiler's ``export_chrome_trace`` (an object whose
``traceEvents`` holds the events) and torch_npu's ``trace_view.json`` (the events as a bare
array). The file is parsed incrementally (ijson, over yajl when its C backend is there): a
2 GB trace never sits in memory whole. A file cut short (a node killed mid-write) yields the
events before the cut, and ``ReadState.cut`` says where and why reading stopped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from majob.errors import UserInputError

_BLANK = b" \t\r\n"
_PREFIX = {b"[": "item", b"{": "traceEvents.item"}


@dataclass
class ReadState:
    """What a pass over one trace saw: how many events, and why it stopped early (None when
    the file was read to its end)."""

    path: Path
    events: int = 0
    cut: str | None = None
    array: bool = False  # the events are a bare array (torch_npu's trace_view.json)


def _first_byte(handle: IO[bytes]) -> bytes:
    while True:
        chunk = handle.read(4096)
        if not chunk:
            return b""
        stripped = chunk.lstrip(_BLANK)
        if stripped:
            return stripped[:1]


def iter_events(state: ReadState) -> Iterator[dict[str, Any]]:
    """The trace's events (dicts), in file order; a cut or malformed file ends the stream
    early and sets ``state.cut``. Raises ``UserInputError`` when the file is no JSON trace."""
    import ijson

    path = state.path
    try:
        handle = path.open("rb")
    except OSError as error:
        raise UserInputError(f"{path}: cannot read the trace ({error.strerror})") from None
    with handle:
        first = _first_byte(handle)
        if first not in _PREFIX:
            raise UserInputError(
                f"{path}: not a Chrome trace (no JSON object or array)",
                hint="give the trace_view.json torch.profiler or torch_npu wrote",
            )
        state.array = first == b"["
        handle.seek(0)
        try:
            for event in ijson.items(handle, _PREFIX[first], use_float=True):
                if isinstance(event, dict):
                    state.events += 1
                    yield event
        except ijson.JSONError as error:
            state.cut = _why(str(error))
        except UnicodeDecodeError:
            state.cut = "not UTF-8 text from there on"


def _why(message: str) -> str:
    """yajl's error, as a reason: a premature end is a cut, the rest is malformed text."""
    first = message.strip().splitlines()[0] if message.strip() else "parse error"
    if "premature EOF" in message or "Incomplete" in message or "incomplete" in message:
        return "the file ends mid-event (cut short: killed while writing?)"
    return f"malformed JSON ({first[:120]})"


def write_event_array(state: ReadState, target: Path) -> int:
    """The events of ``state``'s trace as a bare JSON array in ``target`` (the shape
    msprof-analyze reads), streamed; returns how many were written. Stops at a cut."""
    written = 0
    with target.open("w", encoding="utf-8") as out:
        out.write("[")
        for event in iter_events(state):
            out.write(",\n" if written else "\n")
            out.write(json.dumps(event, separators=(",", ":")))
            written += 1
        out.write("\n]\n")
    return written


def number(value: object) -> float | None:
    """A timestamp or duration as a float (torch_npu writes ``ts`` as a string)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None
