"""Deleting keys XML 1.0 cannot carry, through the real client (esdk-obs-python) and the fake.

DeleteObjects is an XML document: a key holding a control character (``\\x01``, ESC, NUL) makes
the whole batch MalformedXML, and a ``\\r`` is read back as ``\\n`` (XML end-of-line handling), so
the batch would delete another key, or nothing. Such keys go one DELETE each; the rest still go
in batches of 1000; a key that cannot be deleted is the one the error names.
"""

from __future__ import annotations

import hashlib

import pytest

from majob.emulator.obs import FakeObsServer
from majob.emulator.obs.models import Blob
from majob.errors import StorageAuthError, StorageError
from majob.storage.obs import ObsObjectStore, xml_carries
from majob.testing import FAKE_BUCKET

HOSTILE = [
    "h/soh\x01.txt",
    "h/esc\x1b[31m.txt",
    "h/nul\x00.txt",
    "h/cr\r.txt",
    "h/crlf\r\n.txt",
    "h/fffe\ufffe.txt",
]
FRIENDLY = ["h/plain.txt", "h/tab\t.txt", "h/lf\n.txt", "h/amp&<lt>.txt", "h/ü b.txt"]


def _put(server: FakeObsServer, *keys: str) -> None:
    for key in keys:
        server.backend.put_object(FAKE_BUCKET, key, Blob(1, hashlib.md5(b"x").digest(), data=b"x"))


def _left(server: FakeObsServer) -> list[str]:
    return sorted(server.backend.buckets[FAKE_BUCKET].objects)


def test_which_keys_xml_carries() -> None:
    assert all(xml_carries(key) for key in FRIENDLY)
    assert not any(xml_carries(key) for key in HOSTILE)


def test_every_key_is_deleted_and_friendly_ones_still_in_batches(
    obs_store: ObsObjectStore, fake_obs_server: FakeObsServer
) -> None:
    bulk = [f"h/bulk/{i:04d}" for i in range(1200)]
    _put(fake_obs_server, *HOSTILE, *FRIENDLY, *bulk)
    fake_obs_server.log.clear()
    obs_store.delete_many(FAKE_BUCKET, [*bulk[:600], *HOSTILE, *FRIENDLY, *bulk[600:]])
    assert _left(fake_obs_server) == []
    assert fake_obs_server.log.count("POST", r"^delete") == 2  # 1205 friendly keys
    assert fake_obs_server.log.count("DELETE") == len(HOSTILE)
    assert all(entry.status < 300 for entry in fake_obs_server.log.entries())


def test_a_carriage_return_key_never_deletes_its_line_feed_twin(
    obs_store: ObsObjectStore, fake_obs_server: FakeObsServer
) -> None:
    _put(fake_obs_server, "twin/a\rb", "twin/a\nb")
    obs_store.delete_many(FAKE_BUCKET, ["twin/a\rb"])
    assert _left(fake_obs_server) == ["twin/a\nb"]


def test_a_key_that_cannot_be_deleted_is_the_one_named(
    obs_store: ObsObjectStore, fake_obs_server: FakeObsServer
) -> None:
    _put(fake_obs_server, "h/plain.txt", "h/esc\x1b[31m.txt")
    fake_obs_server.add_fault(status=403, code="AccessDenied", method="DELETE", path="esc")
    with pytest.raises(StorageAuthError) as caught:
        obs_store.delete_many(FAKE_BUCKET, ["h/plain.txt", "h/esc\x1b[31m.txt"])
    assert caught.value.key == "h/esc\x1b[31m.txt"
    assert "object=obs://majob-test/h/esc\\x1b[31m.txt" in str(caught.value)
    assert _left(fake_obs_server) == ["h/esc\x1b[31m.txt"]


def test_a_refused_batch_names_no_key_of_its_own(
    obs_store: ObsObjectStore, fake_obs_server: FakeObsServer
) -> None:
    _put(fake_obs_server, "h/a", "h/b")
    fake_obs_server.add_fault(status=403, code="AccessDenied", method="POST")
    with pytest.raises(StorageError) as caught:
        obs_store.delete_many(FAKE_BUCKET, ["h/a", "h/b"])
    assert caught.value.key is None and "2 keys" in str(caught.value)
    assert _left(fake_obs_server) == ["h/a", "h/b"]


def test_a_batch_the_server_cannot_read_falls_back_to_one_delete_per_key(
    obs_store: ObsObjectStore, fake_obs_server: FakeObsServer
) -> None:
    """A server stricter than XML 1.0 (or a rule majob does not know): each key alone."""
    _put(fake_obs_server, "h/a", "h/b")
    fake_obs_server.add_fault(status=400, code="MalformedXML", method="POST", count=1)
    obs_store.delete_many(FAKE_BUCKET, ["h/a", "h/b"])
    assert _left(fake_obs_server) == []
    assert fake_obs_server.log.count("DELETE") == 2
