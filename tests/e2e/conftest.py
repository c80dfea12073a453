"""End-to-end tests: real clients against the emulator over loopback."""

from majob.testing import fake_obs_server, obs_env, obs_store

__all__ = ["fake_obs_server", "obs_env", "obs_store"]
