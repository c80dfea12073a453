"""What the sweep tests ask of the emulated cloud."""

from __future__ import annotations

from majob.service.base import Job
from majob.service.connect import open_service
from majob.spec.profiles import load_profile


def jobs_on_cloud() -> list[Job]:
    service = open_service(load_profile("emulator"))
    try:
        jobs, _ = service.search(limit=50)
        return jobs
    finally:
        service.close()
