"""Durations written the way people write them: ``90``, ``90s``, ``10m``, ``1h30m``, ``2d``."""

from __future__ import annotations

import re

_PART = re.compile(r"(\d+)([smhd])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(value: object) -> int:
    """Seconds in ``value``: a whole number of seconds or a string like ``1h30m``."""
    if isinstance(value, bool):
        raise ValueError("a duration is a number of seconds or a string like '10m' or '1h30m'")
    if isinstance(value, int):
        seconds = value
    elif isinstance(value, str):
        text = value.strip().replace(" ", "")
        if text.isdigit():
            seconds = int(text)
        else:
            parts = _PART.findall(text)
            if not parts or "".join(n + u for n, u in parts) != text:
                raise ValueError(
                    f"{value!r} is not a duration: write seconds or e.g. '90s', '10m', '1h30m'"
                )
            seconds = sum(int(n) * _UNIT_SECONDS[u] for n, u in parts)
    else:
        raise ValueError("a duration is a number of seconds or a string like '10m' or '1h30m'")
    if seconds <= 0:
        raise ValueError("a duration must be longer than 0 seconds")
    return seconds


def format_duration(seconds: int) -> str:
    """The shortest ``1h30m``-style spelling of ``seconds``."""
    out = ""
    for unit in ("d", "h", "m", "s"):
        size = _UNIT_SECONDS[unit]
        if seconds >= size:
            out += f"{seconds // size}{unit}"
            seconds %= size
    return out or "0s"
