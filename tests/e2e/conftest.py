"""End-to-end tests: real clients against the emulator over loopback.

``fake_obs_server``, ``obs_store`` and ``obs_env`` come from ``majob.pytest_plugin``.
"""
