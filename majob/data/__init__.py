"""Large data: staging an OBS folder onto an SFS Turbo volume (docs/data.md)."""
