"""The one retry loop for requests to the cloud: OBS (``storage/obs.py``) and ModelArts
(``service/rest.py``) alike.

A failed request is sent again only when ``retry_if`` says its failure may go away (each side
has its rule: ``storage.retry.is_transient``, ``service.failures.is_retryable``), at most
``retries`` more times, and not once ``timeout`` seconds have passed since the first attempt
began; between attempts it waits ``base_delay * 2**(n - 1)`` seconds after attempt ``n`` (at most
``max_delay``), plus up to ``base_delay`` of jitter. The last failure is raised as it was.

A plain loop rather than tenacity: nearly every request succeeds at once, and tenacity costs
~10-30 us per call and ~75-90 ms to import (it imports asyncio; measured for issue 19), paid by
every small file of a sync and by every ``majob list``. This loop costs ~0.3 us until a request
fails.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: HTTP statuses that say "not now" rather than "no": throttled, or the server had a bad moment.
TRANSIENT_STATUS = frozenset({429, 500, 502, 503, 504})
MAX_DELAY = 4.0  # seconds: the longest wait between two attempts, before the jitter


def call_retrying(
    call: Callable[[], T],
    *,
    retry_if: Callable[[BaseException], bool],
    retries: int,
    timeout: float,
    base_delay: float = 0.2,
) -> T:
    """``call()``, sent again after a failure ``retry_if`` accepts, within both bounds."""
    started = time.monotonic()
    attempt = 1
    while True:
        try:
            return call()
        except Exception as error:
            if attempt > retries or not retry_if(error) or time.monotonic() - started >= timeout:
                raise
        delay = min(base_delay * 2 ** (attempt - 1), MAX_DELAY)
        time.sleep(delay + random.uniform(0, base_delay))
        attempt += 1
