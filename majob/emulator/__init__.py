"""Emulators of the Huawei Cloud services majob talks to: ``obs`` (a fake OBS HTTP server)."""
