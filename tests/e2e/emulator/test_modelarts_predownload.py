"""The fake ModelArts downloads a ``prefetch_to_local`` output's own folder into the container,
exactly: not its parent's files, not a sibling folder whose name begins the same, and nothing of
an output that is not marked. (majob gives each stage its own output folder, and relies on this
to keep a debug job's checkpoints out of the formal job's container.)"""

from __future__ import annotations

from typing import Any

from huaweicloudsdkmodelarts.v1.model import (
    CreateTrainingJobRequest,
    ShowTrainingJobLogsPreviewRequest,
)

from tests.e2e.emulator.conftest import BUCKET, Harness

# Lists every file its output dir holds when it starts (what was downloaded into it).
LISTING = """\
import argparse, os
p = argparse.ArgumentParser(); p.add_argument("--train_url"); a, _ = p.parse_known_args()
for root, _, files in os.walk(a.train_url):
    for name in files:
        print("seen", os.path.relpath(os.path.join(root, name), a.train_url), flush=True)
print("listed", flush=True)
"""

AROUND = {  # objects beside the debug stage's folder, none of which the job may get
    "jobs/a/out/top.txt": "the parent's own file",
    "jobs/a/out/formal/ckpt/epoch-0007.pt": "the formal stage's",
    "jobs/a/out/debug-old/ckpt/epoch-0000.pt": "a sibling whose name begins the same",
    "jobs/a/out/debugging.txt": "a key beginning with the folder's name",
}


def _seen(harness: Harness, obs_url: str, *, prefetch: bool) -> list[str]:
    harness.upload_job(script=LISTING)
    for key, text in AROUND.items():
        harness.put(key, text)
    harness.put("jobs/a/out/debug/ckpt/epoch-0000.pt", "debug's checkpoint")
    harness.put("jobs/a/out/debug/model.pth", "debug's model")
    output: dict[str, Any] = {"name": "train_url", "remote": {"obs": {"obs_url": obs_url}}}
    if prefetch:
        output["prefetch_to_local"] = True
    body = harness.body("listing", outputs=[output])
    job_id = harness.client.create_training_job(CreateTrainingJobRequest(body=body)).metadata.id
    assert harness.wait(job_id).status.phase == "Completed"
    log = str(
        harness.client.show_training_job_logs_preview(
            ShowTrainingJobLogsPreviewRequest(training_job_id=job_id, task_id="worker-0")
        ).content
    )
    assert "listed" in log
    return sorted(line.split(" ", 1)[1] for line in log.splitlines() if line.startswith("seen "))


def test_a_predownloaded_output_gets_its_own_folder_exactly(harness: Harness) -> None:
    seen = _seen(harness, f"/{BUCKET}/jobs/a/out/debug/", prefetch=True)
    assert seen == ["ckpt/epoch-0000.pt", "model.pth"]


def test_an_output_not_marked_for_predownload_starts_empty(harness: Harness) -> None:
    assert _seen(harness, f"/{BUCKET}/jobs/a/out/debug/", prefetch=False) == []
