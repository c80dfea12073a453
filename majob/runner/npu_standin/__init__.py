"""A CPU STAND-IN for ``torch_npu``, for smoke runs of Ascend code on machines without NPUs.

Put this directory (not the package) on ``PYTHONPATH`` and ``import torch_npu`` finds the
``torch_npu`` package here: NPU devices map to the CPU, ``hccl`` to ``gloo``, and
``transfer_to_npu`` is a no-op. It proves paths, arguments and the DDP logic, nothing about
operators, precision or speed. ``majob.runner.standin`` decides when the runner uses it.
"""
