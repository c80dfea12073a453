"""``torch_npu.contrib`` of the CPU stand-in."""
