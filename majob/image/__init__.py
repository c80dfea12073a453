"""Runtime images: preset engine compatibility, Dockerfile generation and lint, image tarball
inspection, and conda-pack environments (docs/image.md).

Nothing is imported here: ``majob image`` commands load the module they need.
"""
