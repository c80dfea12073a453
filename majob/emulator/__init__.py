"""Emulators of the Huawei Cloud services majob talks to, over one HTTP and control-plane layer
(``http``): ``obs`` (a fake OBS), ``modelarts`` (a fake ModelArts that really runs the jobs),
``cloud`` (both together, in this process), ``daemon`` (both as ``majob emulator start``'s
background process) and ``endpoints`` (where a running emulator listens; light to import)."""
