"""The line of the user's own code in a msprobe stack (``stack.json``, the compare CSV's
``NPU_Stack_Info``): the innermost frame that is no library's and not majob's bootstrap."""

from __future__ import annotations

import re

_FRAME = re.compile(r"File (.+?), line (\d+), in ([^,]+),")
_LIBRARY_PARTS = (
    "/site-packages/",
    "/dist-packages/",
    "/lib/python3",
    "/majob/precision/",
    "/majob_precision/",  # the bootstrap as `submit --dump` stages it
)


def user_frame(stack: str) -> str:
    """The innermost frame of the user's code: not a library, not majob's bootstrap. A path in a
    run's code copy (``.../user-job-dir/<code dir>/x.py``) is shown from the code dir down."""
    for path, line, function in _FRAME.findall(stack):
        if any(part in path for part in _LIBRARY_PARTS):
            continue
        shown = path.split("/user-job-dir/", 1)[-1]
        return f"{shown}:{line} in {function}"
    return ""
