"""``majob.Pipeline`` from Python: results, jobs, metrics, the ledger."""

from __future__ import annotations

from pathlib import Path

import pytest

import majob
from majob.emulator.cloud import EmulatedCloud
from majob.errors import StageRefused


def test_pipeline_run_until_debug_returns_results_with_jobs_and_metrics(
    project: Path, cloud: EmulatedCloud
) -> None:
    lines: list[str] = []
    with majob.Pipeline(
        "tiny.yaml", profile="emulator", upload_inputs=True, report=lines.append
    ) as pipeline:  # closes the ledger and the jobs' clients at the end
        assert [(p.stage, p.action) for p in pipeline.plan("debug")] == [
            ("local", "run"),
            ("debug", "run"),
        ]
        result = pipeline.run(until="debug")
        assert result.ok, result.message
        assert [s.result for s in result.stages] == ["passed", "passed"]
        assert "[worker-0] epoch 0 loss=1.0" in lines

        local, debug = result["local"], result["debug"]
        assert local.run is not None and local.run.ok
        assert debug.job is not None and debug.job.phase == "Completed"
        frame = debug.metrics()
        assert frame.value.tolist() == [1.0]
        assert debug.job.metrics().value.tolist() == [1.0]  # the job finds itself in the ledger
        assert debug.job.refresh().phase == "Completed"  # the handle still reaches the service
        assert any("epoch 0 loss=1.0" in line for line in debug.job.logs())
        assert repr(result) == "<PipelineResult tiny: local passed, debug passed>"
        assert repr(debug).startswith("<StageResult debug passed in ")
        assert "Completed" in debug._repr_html_()
        history = pipeline.history()
        assert [r.stage for r in history] == ["debug", "local"]
        assert "ledger: 2 records, newest first" in (history._repr_html_() or "")

        again = pipeline.run(until="debug")
        assert [s.result for s in again.stages] == ["skipped", "skipped"]
        assert again.message.startswith("nothing to run: local and debug passed")


def test_a_closed_gate_raises_stage_refused(project: Path) -> None:
    pipeline = majob.Pipeline("tiny.yaml", report=lambda line: None)
    with pytest.raises(
        StageRefused, match="debug refused for tiny: the local stage has not passed"
    ) as refused:
        pipeline.run(start="debug")
    # The hint is a command to copy: the spec's own path, not a placeholder.
    assert refused.value.hint is not None
    assert refused.value.hint.startswith(
        "run the earlier stages (majob pipeline tiny.yaml --until debug)"
    )
    from_object = majob.Pipeline(majob.load_spec("tiny.yaml"), report=lambda line: None)
    with pytest.raises(StageRefused) as refused:
        from_object.run(start="debug")
    assert "(Pipeline(spec).run(until='debug'))" in str(refused.value.hint)
