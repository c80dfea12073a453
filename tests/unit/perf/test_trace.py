"""The trace read as a stream: both shapes, a cut file read up to the cut, malformed text,
and a large trace in bounded memory."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from majob.errors import UserInputError
from majob.perf.trace import ReadState, iter_events, write_event_array

EVENTS = [{"ph": "X", "name": f"aten::op{i}", "ts": float(i), "dur": 1.0} for i in range(50)]


def _read(path: Path) -> tuple[list[dict[str, object]], ReadState]:
    state = ReadState(path)
    return list(iter_events(state)), state


@pytest.mark.parametrize("shape", ["object", "array"])
def test_both_shapes_are_read_whole(tmp_path: Path, shape: str) -> None:
    path = tmp_path / "trace.json"
    body = EVENTS if shape == "array" else {"schemaVersion": 1, "traceEvents": EVENTS, "x": 1}
    path.write_text(json.dumps(body))
    events, state = _read(path)
    assert events == EVENTS
    assert state.cut is None
    assert state.array == (shape == "array")


def test_a_cut_trace_is_read_up_to_the_cut(tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    text = json.dumps({"traceEvents": EVENTS})
    path.write_text(text[: len(text) // 2])
    events, state = _read(path)
    assert 0 < len(events) < len(EVENTS)
    assert events == EVENTS[: len(events)]
    assert state.cut is not None and "cut short" in state.cut


def test_malformed_text_stops_the_stream_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    text = json.dumps({"traceEvents": EVENTS})
    middle = text.index('"aten::op20"')
    path.write_text(text[:middle] + "@@garbage@@" + text[middle:])
    events, state = _read(path)
    assert len(events) == 20  # op0..op19, the ones before the garbage
    assert state.cut is not None and state.cut.startswith("malformed JSON")


@pytest.mark.parametrize("text", ["", "   \n", "not json at all", "12345"])
def test_a_file_that_is_no_json_trace_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "trace.json"
    path.write_text(text)
    with pytest.raises(UserInputError, match="not a Chrome trace"):
        _read(path)


def test_the_array_rewrite_is_what_msprof_analyze_reads(tmp_path: Path) -> None:
    source, target = tmp_path / "trace.json", tmp_path / "array.json"
    source.write_text(json.dumps({"traceEvents": EVENTS}))
    assert write_event_array(ReadState(source), target) == len(EVENTS)
    assert json.loads(target.read_text()) == EVENTS


GENERATE = textwrap.dedent(
    """
    import json, sys
    steps, per_step = int(sys.argv[2]), int(sys.argv[3])
    with open(sys.argv[1], "w") as out:
        out.write('{"schemaVersion": 1, "traceEvents": [')
        t = 0.0
        for step in range(steps):
            length = per_step * 12.0
            out.write(("," if step else "") + json.dumps({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}",
                                  "pid": 1, "tid": 1, "ts": t, "dur": length, "args": {"External id": step}}))
            for i in range(per_step):
                event = {"ph": "X", "cat": "cpu_op", "name": f"aten::op{i % 97}", "pid": 1, "tid": 1,
                         "ts": t + i * 12.0 + 1, "dur": 10.0,
                         "args": {"External id": i, "Record function id": 0, "Sequence number": i,
                                  "Fwd thread id": 0, "Input Dims": [[64, 64], [64]],
                                  "Input type": ["float", "float"]}}
                out.write("," + json.dumps(event))
            t += length
        out.write('], "traceName": "big"}')
    """
)

MEASURE = textwrap.dedent(
    """
    import resource, sys
    from pathlib import Path
    from majob.perf.layout import rank_dirs
    from majob.perf.analyse import analyse_rank
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    [rank] = rank_dirs(Path(sys.argv[1]))
    profile = analyse_rank(rank)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(len(profile.steps), profile.events, before, after)
    """
)


@pytest.mark.slow
def test_a_large_trace_is_analysed_in_bounded_memory(tmp_path: Path) -> None:
    folder = tmp_path / "profiling" / "worker-0-rank0_1_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    folder.mkdir(parents=True)
    trace = folder / "trace_view.json"
    subprocess.run([sys.executable, "-c", GENERATE, str(trace), "40", "15000"], check=True)
    size = trace.stat().st_size
    assert size > 100e6  # about 130 MB
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(tmp_path)], check=True, capture_output=True, text=True
    )
    steps, events, before_kib, after_kib = (int(v) for v in done.stdout.split())
    assert steps == 40
    assert events == 40 * 15001
    # a json.load of this file would need several times its size; the stream keeps one step
    grown = (after_kib - before_kib) * 1024
    assert grown < size / 4, f"peak RSS grew by {grown / 1e6:.0f} MB on a {size / 1e6:.0f} MB trace"
