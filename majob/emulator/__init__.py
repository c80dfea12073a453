"""Emulators of the Huawei Cloud services majob talks to, over one HTTP and control-plane layer
(``http``): ``obs`` (a fake OBS), ``modelarts`` (a fake ModelArts that really runs the jobs),
``cloud`` (both together, in this process), ``daemon`` (both as ``majob emulator start``'s
background process), ``statefile`` (what a running emulator publishes for its clients),
``statedir`` (its private, locked state dir), ``defaults`` (its published identity and defaults)
and ``obs_command`` (the ``obs`` command, declared once).

A separate service: nothing here imports the client's spec model, services, compilers, pipeline
or CLI (``tests/unit/emulator/test_separate_service.py``)."""
