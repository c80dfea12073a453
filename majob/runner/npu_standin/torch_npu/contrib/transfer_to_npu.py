"""A no-op in majob's CPU stand-in.

The real module re-points CUDA APIs at the NPU. On a machine without NPUs there is nothing to
point at: CUDA stays unavailable, so code written as ``'cuda' if torch.cuda.is_available() else
'cpu'`` takes its CPU branch. Unconditional ``.cuda()`` calls fail as they would on any CPU host.
"""
