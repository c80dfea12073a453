"""Create a training job exactly once, whatever the connection does.

The body carries ``metadata.annotations["majob/submit-id"]``, a digest of the body, the code's
content and the stage. When a create fails in a way that leaves its fate unknown (a time-out, a
dropped connection, a 5xx), majob does not send it again blindly: the first create may still be
running in the service, so it searches for a job with that submit id until the first create can
no longer land, and only sends the create again when none did. A create the service turned away
(429, 503) is sent again after one search. One submit makes at most one job.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from majob.errors import ServiceError, ServiceUnreachable
from majob.service.base import (
    CREATE_LANDING_WINDOW,
    SUBMIT_ID_ANNOTATION,
    Job,
    JobFilter,
    TrainingService,
)
from majob.spec.models import Stage

RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
CREATE_BUDGET = 120.0  # seconds a submit keeps trying to create its one job
CLOCK_SLACK_MS = 120_000  # the service's clock may run behind ours
TURNED_AWAY_STATUS = frozenset({429, 503})
LANDING_POLL = 2.0  # seconds between searches while a create may still land
NAME_TAKEN = "ModelArts.2751"


def is_ambiguous(error: BaseException) -> bool:
    """A create that failed this way may have made the job anyway, or may succeed if sent
    again: the connection failed, the service had a 5xx moment, or it throttled (429)."""
    if isinstance(error, ServiceUnreachable):
        return True
    return isinstance(error, ServiceError) and (error.status or 0) in RETRYABLE_STATUS


def turned_away(error: ServiceError) -> bool:
    """The service answered that it did not take the request (throttled, or unavailable)."""
    return not isinstance(error, ServiceUnreachable) and (error.status or 0) in TURNED_AWAY_STATUS


def submit_id(body: Mapping[str, Any], code: str, stage: Stage) -> str:
    """The submit id: spec (its compiled body), code and stage, digested together."""
    body_digest = hashlib.sha256(
        json.dumps(body, sort_keys=True, ensure_ascii=False).encode()
    ).hexdigest()
    whole = hashlib.sha256(f"{body_digest}\n{code}\n{stage}".encode()).hexdigest()
    return whole[:32]


def tagged(body: Mapping[str, Any], submit_id: str) -> dict[str, Any]:
    """``body`` with the submit id among its annotations."""
    out = copy.deepcopy(dict(body))
    metadata = out.setdefault("metadata", {})
    annotations = dict(metadata.get("annotations") or {})
    annotations[SUBMIT_ID_ANNOTATION] = submit_id
    metadata["annotations"] = annotations
    return out


def find_submitted(
    service: TrainingService, name: str, submit_id: str, since_ms: int
) -> Job | None:
    """The job this submit created, if the service has it."""
    jobs, _ = service.search(JobFilter(name=name, created_after=since_ms - CLOCK_SLACK_MS))
    return next((j for j in jobs if j.name == name and j.submit_id == submit_id), None)


def create_once(
    service: TrainingService,
    body: Mapping[str, Any],
    *,
    budget: float = CREATE_BUDGET,
    landing_window: float = CREATE_LANDING_WINDOW,
    report: Callable[[str], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Job:
    """Create the job ``body`` describes (it must carry a submit id) exactly once.

    A create the service turned away (429, 503) made no job: after one search confirms it, it
    is sent again. A create whose answer was lost (a time-out, a dropped connection, another
    5xx) may still be running in the service and land later: it is looked for by its submit id
    until ``landing_window`` seconds after it was sent, and only sent again when none landed.
    """
    annotations = (body.get("metadata") or {}).get("annotations") or {}
    sid = annotations.get(SUBMIT_ID_ANNOTATION)
    if not sid:
        raise ValueError("create_once needs a body tagged with a submit id")
    creation = _Creation(
        service,
        body,
        str(sid),
        name=str(body["metadata"]["name"]),
        started_ms=int(time.time() * 1000),
        deadline=time.monotonic() + budget,
        landing_window=landing_window,
        say=report or (lambda line: None),
        sleep=sleep,
    )
    return creation.run()


@dataclass
class _Creation:
    """One submit's creates: sent, looked for, and sent again only when none can land."""

    service: TrainingService
    body: Mapping[str, Any]
    sid: str
    name: str
    started_ms: int  # when the first create was sent, by the service's clock (roughly)
    deadline: float  # time.monotonic() past which no create is sent
    landing_window: float
    say: Callable[[str], None]
    sleep: Callable[[float], None]

    def run(self) -> Job:
        delay = 0.2
        attempt = 0
        while True:
            attempt += 1
            sent = time.monotonic()
            try:
                return self.service.create(self.body)
            except ServiceError as error:
                duplicate = error.code == NAME_TAKEN and attempt > 1
                if not (is_ambiguous(error) or duplicate):
                    raise
                failure = error
            # An earlier create of ours may hold the name, or this one's answer was lost.
            in_flight = not (duplicate or turned_away(failure))
            found = self._landed(failure, sent, in_flight)
            if found is not None:
                return found
            if failure.code == NAME_TAKEN or time.monotonic() + delay > self.deadline:
                raise failure  # the name is taken, and not by our job; or the time is up
            if in_flight:
                self.say(
                    f"no job with this submit id appeared in {self.landing_window:.0f}s; "
                    "sending it again"
                )
            else:
                self.say(f"create turned away ({failure.message}); no job was made; trying again")
            self.sleep(delay)
            delay = min(delay * 2, 5.0)

    def _landed(self, failure: ServiceError, sent: float, in_flight: bool) -> Job | None:
        """The job a failed create made (or an earlier one of ours, holding the name), if the
        service has it: a create in flight is looked for until it can no longer land."""
        look_until = min(sent + self.landing_window, self.deadline) if in_flight else 0.0
        if in_flight:
            # Whatever happens next, this create may still make its job.
            failure.hint = (
                f"the job may still appear: see `majob list --name {self.name}` before "
                "submitting again"
            )
            left = max(0.0, look_until - time.monotonic())
            self.say(
                f"create got no answer ({failure.message}); it may still land: looking for job "
                f"{self.name!r} by its submit id for up to {left:.0f}s before sending it again"
            )
        found = self._look_for(look_until, failure)
        if found is not None and in_flight:
            self.say(f"the create landed: job {found.id}")
        return found

    def _look_for(self, until: float, failure: ServiceError) -> Job | None:
        """Search for the job until it is found or ``until`` passed with at least one answer; a
        search that keeps failing until the deadline raises ``failure`` (its fate stays
        unknown)."""
        answered = False
        delay = 0.2
        while True:
            try:
                found = find_submitted(self.service, self.name, self.sid, self.started_ms)
            except ServiceError as error:
                if not is_ambiguous(error) or time.monotonic() + delay > self.deadline:
                    raise failure from None
            else:
                if found is not None:
                    return found
                answered = True
            if answered and time.monotonic() >= until:
                return None
            self.sleep(delay)
            delay = min(delay * 2, LANDING_POLL)
