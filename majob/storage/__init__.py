"""OBS access: paths (uri), the ObjectStore seam (base), its backends and sync."""
