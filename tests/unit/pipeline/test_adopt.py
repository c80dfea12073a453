"""Which ledger record a re-run adopts, and the takeover itself (``pipeline/adopt.py``,
``Ledger.adopt``); the jobs themselves are adopted in tests/e2e/pipeline/test_pipeline_adopt.py."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from majob.pipeline.adopt import left_record, stale_record
from majob.pipeline.digests import Fingerprint
from majob.pipeline.ledger import Ledger
from majob.processes import ProcessRef

THIS = Fingerprint("s" * 64, "c" * 64)
OTHER_CODE = Fingerprint("s" * 64, "d" * 64)


def start(ledger: Ledger, fingerprint: Fingerprint = THIS) -> int:
    return ledger.start(
        spec_name="job",
        stage="debug",
        spec_digest=fingerprint.spec_digest,
        code_digest=fingerprint.code_digest,
    )


def left_by_a_dead_process(path: Path, fingerprint: Fingerprint = THIS) -> int:
    """A ``running`` record with a job, whose process ended without closing it (as after
    ``kill -9``); its id."""
    code = textwrap.dedent(
        f"""
        from pathlib import Path
        from majob.pipeline.ledger import Ledger
        with Ledger(Path({str(path)!r})) as ledger:
            record = ledger.start(spec_name="job", stage="debug",
                                  spec_digest={fingerprint.spec_digest!r},
                                  code_digest={fingerprint.code_digest!r})
            ledger.set_job(record, "job-1")
            print(record)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(done.stdout)


def test_the_record_a_dead_run_left_is_found_past_refusals_and_taken_over_once(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.db"
    left = left_by_a_dead_process(path)
    with Ledger(path) as ledger:
        refused = start(ledger)
        ledger.finish(refused, result="refused", reason="1 problem found before submitting")
        found = left_record(ledger, "job", "debug", THIS)
        assert found is not None and found.id == left and found.effective_result == "interrupted"
        assert left_record(ledger, "job", "debug", OTHER_CODE) is None  # other code: not its job
        assert ledger.adopt(found)
        assert not ledger.adopt(found)  # the row names this process now: a second taker loses
        taken = ledger.get(left)
    assert taken.result == "running" and taken.effective_result == "running"
    assert taken.adopted_at and taken.job_id == "job-1"
    assert (taken.pid, taken.pid_started) == (
        ProcessRef.current().pid,
        ProcessRef.current().started,
    )


def test_a_later_verdict_for_the_same_code_and_spec_leaves_nothing_to_adopt(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.db"
    left_by_a_dead_process(path)
    with Ledger(path) as ledger:
        later = start(ledger)
        ledger.finish(later, result="failed", reason="job Failed")
        assert left_record(ledger, "job", "debug", THIS) is None
        assert stale_record(ledger, "job", "debug", THIS) is None


def test_a_dead_run_for_other_code_is_the_stale_record_a_new_submit_may_meet(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.db"
    left = left_by_a_dead_process(path, OTHER_CODE)
    with Ledger(path) as ledger:
        assert left_record(ledger, "job", "debug", THIS) is None
        stale = stale_record(ledger, "job", "debug", THIS)
        assert stale is not None and stale.id == left
        assert stale_record(ledger, "job", "formal", THIS) is None


def test_a_refused_record_reads_refused(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.db") as ledger:
        record = start(ledger)
        ledger.finish(record, result="refused", reason="name: job name 'job-debug' is taken")
        kept = ledger.get(record)
    assert kept.result == kept.effective_result == "refused" and not kept.passed
