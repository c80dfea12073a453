"""A step's time split into parts: each event under a step in one part, syncs wherever they
are nested, the gaps between operators, other threads' backward, the device's kernels."""

from __future__ import annotations

import pytest

from majob.perf.timeline import PARTS, Timeline, part_of

from .conftest import StepPlan, op, step_events


def _steps(events: list[dict[str, object]], cut: bool = False):  # type: ignore[no-untyped-def]
    timeline = Timeline()
    for event in events:
        timeline.add(event)
    return timeline, timeline.finish(cut)


@pytest.mark.parametrize(
    ("name", "part"),
    [
        ("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", "data"),
        ("Optimizer.step#AdamW.step", "optimizer"),
        ("Optimizer.zero_grad#SGD.zero_grad", "optimizer"),
        ("autograd::engine::evaluate_function: MulBackward0", "backward"),
        ("aten::item", "sync"),
        ("cudaDeviceSynchronize", "sync"),
        ("aten::conv2d", "forward"),
        ("my_block", "forward"),
    ],
)
def test_an_event_directly_under_a_step_goes_to_its_part(name: str, part: str) -> None:
    assert part_of(name) == part


def test_the_parts_of_a_step_add_up_to_the_step() -> None:
    plan = StepPlan(
        [
            ("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 300.0),
            ("aten::linear", 200.0),
            ("autograd::engine::evaluate_function: AddmmBackward0", 250.0),
            ("Optimizer.step#SGD.step", 100.0),
        ],
        gap=10.0,
    )
    _, steps = _steps(step_events([plan, plan]))
    assert [s.number for s in steps] == [0, 1]
    step = steps[0]
    assert step.parts["data"] == 300.0
    assert step.parts["forward"] == 200.0
    assert step.parts["backward"] == 250.0
    assert step.parts["optimizer"] == 100.0
    assert step.parts["dispatch"] == 40.0  # four gaps of 10 us: the host issuing the next op
    assert sum(step.parts[p] for p in PARTS) == pytest.approx(step.dur)
    assert step.loader == "_SingleProcessDataLoaderIter"
    assert step.optimizer == "SGD"


def test_a_nested_sync_is_taken_out_of_the_part_it_is_in() -> None:
    plan = StepPlan(
        [("aten::linear", 500.0), ("Optimizer.step#SGD.step", 100.0)],
        nested=[(0, "aten::item", 120.0)],
    )
    _, [step] = _steps(step_events([plan]))
    assert step.parts["sync"] == 120.0
    assert step.parts["forward"] == 380.0
    assert step.syncs == 1


def test_a_long_gap_is_host_time_and_a_short_one_before_a_sync_is_the_sync() -> None:
    plan = StepPlan([("aten::linear", 100.0), ("aten::item", 10.0), ("aten::mul", 10.0)], gap=5.0)
    events = step_events([plan])
    events[0]["dur"] += 1000.0  # the step ends 1 ms after its last operator
    _, [step] = _steps(events)
    assert step.parts["host"] == pytest.approx(1005.0)
    assert step.parts["sync"] == pytest.approx(15.0)  # the item and the gap before it
    assert step.long_gaps == [("aten::mul", "(end of step)", pytest.approx(1005.0))]


def test_only_gaps_every_step_has_at_the_same_place_recur() -> None:
    from majob.perf.analyse import recurring_gaps

    events = []
    t = 0.0
    for number, stall in enumerate((0.0, 3000.0, 0.0)):
        # linear, 5 us, mul, (a stall in the second step only), mul, 800 us of Python code
        length = 100 + 5 + 10 + 5 + stall + 10 + 800
        events.append(op(f"ProfilerStep#{number}", t, length, cat="user_annotation"))
        events.append(op("aten::linear", t, 100.0))
        events.append(op("aten::mul", t + 105, 10.0))
        events.append(op("aten::mul", t + 120 + stall, 10.0))
        t += length
    _, steps = _steps(events)
    assert [len(s.long_gaps) for s in steps] == [1, 2, 1]
    assert recurring_gaps(steps) == pytest.approx(800.0)


def test_small_operators_are_counted_and_the_optimizers_own_operators_apart() -> None:
    plan = StepPlan(
        [("aten::add", 5.0)] * 30 + [("Optimizer.step#Adam.step", 400.0)],
        nested=[(30, "aten::mul_", 2.0), (30, "aten::_foreach_add_", 3.0)],
    )
    events = step_events([plan])
    _, [step] = _steps(events)
    assert step.small_ops == 30
    assert step.small_time == pytest.approx(150.0)
    assert step.optimizer_ops == 2
    assert step.multi_tensor


def test_backward_on_another_thread_fills_the_main_threads_gap() -> None:
    plan = StepPlan(
        [("aten::linear", 100.0), ("Optimizer.step#SGD.step", 50.0)],
        gap=400.0,
        other_thread=[("autograd::engine::evaluate_function: AddmmBackward0", 120.0, 300.0)],
    )
    _, [step] = _steps(step_events([plan]))
    assert step.parts["backward"] == 300.0
    assert step.parts["host"] == pytest.approx(500.0)


def test_device_kernels_give_the_devices_busy_time() -> None:
    plan = StepPlan([("aten::linear", 100.0), ("Optimizer.step#SGD.step", 50.0)])
    events = step_events([plan, plan])
    events += [op("volta_sgemm", 1010.0, 60.0, tid=7, cat="kernel")]
    timeline, steps = _steps(events)
    assert timeline.device_seen
    assert steps[0].device_busy == 60.0
    assert steps[1].device_busy == 0.0


def test_a_step_still_open_at_a_cut_is_dropped() -> None:
    plan = StepPlan([("aten::linear", 100.0), ("Optimizer.step#SGD.step", 50.0)])
    _, steps = _steps(step_events([plan] * 3), cut=True)
    assert [s.number for s in steps] == [0, 1]


def test_self_time_excludes_the_children() -> None:
    plan = StepPlan(
        [("aten::linear", 100.0), ("Optimizer.step#SGD.step", 50.0)],
        nested=[(0, "aten::addmm", 70.0)],
    )
    timeline, _ = _steps(step_events([plan]))
    assert timeline.ops["aten::linear"].self_us == pytest.approx(30.0)
    assert timeline.ops["aten::addmm"].self_us == pytest.approx(70.0)
    assert "ProfilerStep#0" not in timeline.ops


def test_events_that_are_not_complete_ones_or_lack_times_are_ignored() -> None:
    plan = StepPlan([("aten::linear", 100.0), ("Optimizer.step#SGD.step", 50.0)])
    events = step_events([plan])
    events += [{"ph": "M", "name": "process_name"}, {"ph": "X", "name": "x", "ts": "bad"}]
    events += [{"ph": "i", "name": "Iteration Start", "ts": 1.0}]
    _, [step] = _steps(events)
    assert step.parts["forward"] == 100.0


def test_string_timestamps_as_torch_npu_writes_them_are_read() -> None:
    plan = StepPlan([("aten::linear", 100.0), ("Optimizer.step#SGD.step", 50.0)])
    events = step_events([plan])
    for event in events:
        event["ts"] = f"{event['ts']:.3f}"
    _, [step] = _steps(events)
    assert step.parts["forward"] == 100.0


def test_python_frames_of_a_profile_with_stacks_are_transparent() -> None:
    plan = StepPlan(
        [
            ("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 300.0),
            ("Optimizer.step#SGD.step", 100.0),
        ]
    )
    events = step_events([plan])
    # with_stack=True: a Python frame around the loader's annotation, starting before it
    frame = op(
        "torch/utils/data/dataloader.py(700): __next__", 1000.0, 302.0, cat="python_function"
    )
    events.insert(1, frame)
    _, [step] = _steps(events)
    assert step.parts["data"] == 300.0
    assert step.parts["forward"] == 0.0


def test_the_small_operator_that_makes_a_syncs_value_is_the_syncs() -> None:
    # for i in range(n): total += x[i].item()
    plan = StepPlan([("aten::select", 4.0), ("aten::item", 3.0)] * 50 + [("aten::linear", 500.0)])
    _, [step] = _steps(step_events([plan]))
    assert step.parts["sync"] == pytest.approx(50 * (4.0 + 5.0 + 3.0 + 5.0) - 5.0)
    assert step.parts["forward"] == 500.0
    assert step.small_ops == 0
