"""A fake ModelArts training service (moto-style) that really runs the jobs it is given.

``models`` holds state and rules (over ``store``, sqlite; ``render`` and ``search`` shape the
answers), ``plan`` checks create bodies (``launch`` how a job starts, ``jsonbody`` one value)
against the fake's own ``catalog``, ``container`` lays a job's container out, ``executor`` runs a
job's lifecycle and processes (``jobfaults`` injects failures), ``server`` speaks HTTP (``auth``
checks the SDK-HMAC-SHA256 signature). ``majob.emulator.cloud`` runs it with the fake OBS.
"""

from __future__ import annotations

from majob.emulator.modelarts.errors import ModelArtsError
from majob.emulator.modelarts.jobfaults import JobFault
from majob.emulator.modelarts.server import FakeModelArtsServer, LoggedCall

__all__ = ["FakeModelArtsServer", "JobFault", "LoggedCall", "ModelArtsError"]
