"""The emulator's defaults: the identity it publishes (the test key pair both fakes accept, the
region and project id they answer for), the buckets it creates, the fake OBS's patience.

Standard library only: the CLI declares its options from here without importing the servers.
"""

from __future__ import annotations

# The emulator's documented test keys (docs/emulator.md, docs/obs.md): never real ones, and not
# secrets: they are published, and any local user may call the fakes with them.
DEFAULT_ACCESS_KEY = "MAJOBFAKEACCESSKEY00"
DEFAULT_SECRET_KEY = "majob-fake-secret-key-0000000000000000000"
EMULATOR_PROJECT_ID = "0" * 31 + "1"  # a fixed 32-hex project id, like a real one
EMULATOR_REGION = "cn-north-4"
# The buckets the example specs (job_specs/*.yaml) use.
DEFAULT_BUCKETS = ("majob-demo",)
# Seconds the fake OBS waits for a client that stopped in the middle of a body (S3: ~20).
DEFAULT_REQUEST_TIMEOUT = 20.0
