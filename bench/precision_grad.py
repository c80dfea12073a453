"""What ``--dump grad`` costs per recorded step (``bench/precision.py --only grad``).

In one process, the same training step (forward, backward, Adam step; one thread, as a node on
the shared machine) of each model, alternately without and with the bootstrap's gradient
recorder (``majob/precision/gradprobe.py``, the default selection: every parameter, the
default bounds); printed side by side: the median step time of each and their ratio (goal: at
most 1.3x). The models: the two bundled examples' (MNIST's Net, the DDP example's SmallResNet)
on their 8x8 digits, and a 4-layer MLP of about 2.2M parameters for a model whose step is not
a few milliseconds. Only the recorded steps pay (``precision.grad.steps``, by default the
dump's two).
"""

from __future__ import annotations

import runpy
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _models() -> list[tuple[str, Any, Any]]:
    import torch

    sys.path.insert(0, str(ROOT / "examples" / "ddp_resnet"))  # its checkpoints module
    mnist = runpy.run_path(str(ROOT / "examples" / "mnist" / "train.py"), run_name="bench")
    resnet = runpy.run_path(str(ROOT / "examples" / "ddp_resnet" / "train.py"), run_name="bench")
    digits = torch.randn(64, 1, 8, 8)
    mlp = torch.nn.Sequential(
        torch.nn.Flatten(),
        torch.nn.Linear(64, 1024),
        torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024),
        torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024),
        torch.nn.ReLU(),
        torch.nn.Linear(1024, 10),
    )
    return [
        ("mnist Net", mnist["Net"](), digits),
        ("SmallResNet", resnet["SmallResNet"](), digits),
        ("MLP 2.2M", mlp, digits),
    ]


def step_times(model: Any, data: Any, steps: int) -> tuple[float, float]:
    """Median seconds of a plain step and of a recorded one, interleaved."""
    import torch

    from majob.precision.gradprobe import GradRecorder
    from majob.spec.precision_spec import DEFAULT_BOUNDS

    target = torch.randint(0, 10, (data.shape[0],), generator=torch.Generator().manual_seed(0))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    plain: list[float] = []
    recorded: list[float] = []
    # the dump beside the project, where a run's goes (its outputs' local stand-ins): on this
    # machine creating a file in /tmp costs about 5x what it does there
    work = ROOT / ".majob"
    work.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-grad-", dir=work) as scratch:
        settings = {"steps": list(range(steps)), "layers": [], "bounds": list(DEFAULT_BOUNDS)}
        recorder = GradRecorder(settings, scratch, "0")
        recorder.watch(model)
        for step in range(steps):
            for record in (False, True):
                started = time.perf_counter()
                optimizer.zero_grad()
                torch.nn.functional.cross_entropy(model(data), target).backward()
                if record:
                    recorder.record(step)
                optimizer.step()
                (recorded if record else plain).append(time.perf_counter() - started)
    return statistics.median(plain[1:]), statistics.median(recorded[1:])  # the first warms up


def main(steps: int = 40) -> None:
    import torch

    torch.set_num_threads(1)
    for name, model, data in _models():
        params = sum(p.numel() for p in model.parameters())
        plain, recorded = step_times(model, data, steps)
        print(
            f"grad {name} ({params:,} parameters): plain step {plain * 1e3:.2f} ms; "
            f"recorded step {recorded * 1e3:.2f} ms; ratio {recorded / plain:.2f}x "
            "(goal <= 1.3x)"
        )


if __name__ == "__main__":
    main()
