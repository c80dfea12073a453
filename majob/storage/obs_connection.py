"""``ObsConnection``: one keep-alive esdk-obs-python client and the way every request goes
through it (``_call``): sent, its failure mapped (``obs_failures``), retried by the one rule.

This is the only module that imports the OBS SDK (``obs``), and only when a store is opened.
Retries are ours, not the SDK's (it is built with ``max_retry_count=0``): the SDK does not retry
file-object bodies or parts, and one policy for every call is easier to reason about. ``_call``
applies the rule of ``storage/retry.py`` (transient statuses, throttling and connection
failures; at most ``retries`` more requests within ``timeout`` seconds); nothing above the store
retries again.

Only the SDK's and the network's failures become ``StorageError``s (their cause kept, for
``MAJOB_DEBUG=1``); an exception raised by majob's own code is a bug and propagates unchanged.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import os
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from majob.errors import MajobError, UserInputError
from majob.masking import Masker
from majob.retry import call_retrying
from majob.storage.config import Credentials, ObsConfig
from majob.storage.obs_answers import READ_CHUNK
from majob.storage.obs_failures import NETWORK_ERRORS, malformed, raised_in, storage_error
from majob.storage.retry import is_transient

T = TypeVar("T")
INSTALL_HINT = "install the OBS extra: pip install 'majob[obs]'"


def _import_sdk() -> Any:
    try:
        if "obs" in sys.modules:
            import obs
        else:
            deferred = "requests" not in sys.modules
            with _requests_deferred() if deferred else contextlib.nullcontext():
                obs = _lean_sdk()
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise UserInputError(
            "the OBS SDK (esdk-obs-python) is not installed", hint=INSTALL_HINT
        ) from error
    return obs


def _lean_sdk() -> Any:
    """The ``obs`` package with ``obs.client`` and ``obs.model`` loaded, not its ``__init__``.

    The SDK's ``__init__`` also loads client-side encryption (pycryptodome's ciphers), the
    workflow client and the token providers, which majob never uses: ~20 ms and ~40 modules of
    every ``majob obs`` command. The package is made from its spec without running that file;
    the names of ``obs.model`` and ``ObsClient`` are set on it, and the first use of any other
    name (``obs.CryptoObsClient``, ``from obs import LogConf``) runs the real ``__init__`` in
    the package's namespace, so to anyone else it is the whole SDK.
    """
    spec = importlib.util.find_spec("obs")
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        raise ImportError("obs")
    package = importlib.util.module_from_spec(spec)
    loader = spec.loader
    sys.modules["obs"] = package
    try:
        client = importlib.import_module("obs.client")
        model = importlib.import_module("obs.model")
    except BaseException:
        del sys.modules["obs"]
        raise
    package.__dict__.update(
        (name, value) for name, value in vars(model).items() if not name.startswith("_")
    )
    package.__dict__["ObsClient"] = client.ObsClient
    completed = False

    def complete(name: str) -> Any:
        nonlocal completed
        if not completed and not name.startswith("__"):
            completed = True
            loader.exec_module(package)
            if name in package.__dict__:
                return package.__dict__[name]
        raise AttributeError(f"module 'obs' has no attribute {name!r}")

    package.__dict__["__getattr__"] = complete
    return package


@contextlib.contextmanager
def _requests_deferred() -> Iterator[None]:
    """Import the SDK without importing ``requests`` (~45 ms of every ``majob obs`` command).

    The SDK sends through ``http.client``; ``requests`` serves only its opt-in session mode
    (``use_http_conns=True``, which majob never asks for) and the token fetch of one security
    provider. Its ``obs.http`` and ``obs.scheduler`` name ``requests`` at import, and
    ``obs.http`` subclasses ``requests.adapters.HTTPAdapter``. While the SDK is imported,
    ``requests`` is a stand-in that loads the real module on first use of any name, and
    ``HTTPAdapter`` a stand-in base that swaps itself for the real one when first built. The
    stand-ins leave ``sys.modules`` afterwards: anyone else's ``import requests`` is the real one.
    """
    stand_in = types.ModuleType("requests")
    adapters = types.ModuleType("requests.adapters")

    def real(name: str) -> Any:
        return getattr(importlib.import_module("requests"), name)

    class HTTPAdapter:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            base = importlib.import_module("requests.adapters").HTTPAdapter
            for sub in HTTPAdapter.__subclasses__():
                sub.__bases__ = tuple(base if b is HTTPAdapter else b for b in sub.__bases__)
            base.__init__(self, *args, **kwargs)

    stand_in.__getattr__ = real  # type: ignore[method-assign]
    adapters.HTTPAdapter = HTTPAdapter  # type: ignore[attr-defined]
    stand_in.adapters = adapters  # type: ignore[attr-defined]
    sys.modules["requests"], sys.modules["requests.adapters"] = stand_in, adapters
    try:
        yield
    finally:
        for name, module in (("requests", stand_in), ("requests.adapters", adapters)):
            if sys.modules.get(name) is module:
                del sys.modules[name]


@functools.cache
def _closing_client_class(sdk: Any) -> Any:
    """``ObsClient`` that closes the connection a failed send leaves open, and sends a GET
    whose answer majob reads itself (``getObjectInto``).

    When sending a request raises (a reset in the middle of a body, a time-out), the SDK's
    ``_make_request_with_retry`` has not yet been handed the connection and closes ``None``: the
    socket leaks (a ``ResourceWarning`` per failure). This subclass remembers the connection it
    handed out on this thread and closes it when the request fails. It relies on internal
    methods of esdk-obs-python 3.x (``internals``); without them it falls back to the plain
    client, and ``get_file`` to the SDK's ``getObject``.
    """
    base = sdk.ObsClient
    internals = (
        "_get_server_connection",
        "_make_request_internal",
        "_make_get_request",
        "_parse_xml_internal",
        "_rename_response_headers",
    )
    if not all(hasattr(base, name) for name in internals) or not hasattr(sdk.client, "funcCache"):
        return base  # pragma: no cover - another SDK version
    local = threading.local()

    class ClosingObsClient(base):  # type: ignore[misc, valid-type]
        def _get_server_connection(self, *args: Any, **kwargs: Any) -> Any:
            connection = super()._get_server_connection(*args, **kwargs)
            local.connection = connection
            return connection

        def _make_request_internal(self, *args: Any, **kwargs: Any) -> Any:
            local.connection = None
            try:
                return super()._make_request_internal(*args, **kwargs)
            except Exception:
                connection, local.connection = local.connection, None
                if connection is not None:
                    with contextlib.suppress(Exception):
                        connection.close()
                raise

        @sdk.client.funcCache  # type: ignore[untyped-decorator]
        def getObjectInto(self, bucketName: str, objectKey: str, parseMethod: Any) -> Any:
            """A GET whose answer ``parseMethod(connection)`` reads (``obs_answers.
            receive_to_file``): signed, sent and retried as ``getObject`` is, through the same
            wrapper (signature negotiation, logging)."""
            return self._make_get_request(bucketName, objectKey, parseMethod=parseMethod)

    return ClosingObsClient


class ObsConnection:
    """One shared, keep-alive ``ObsClient`` (safe to use from threads) and its request path."""

    def __init__(self, config: ObsConfig, credentials: Credentials | None = None) -> None:
        self.config = config
        creds = credentials or config.resolved_credentials()
        self._secrets = creds.secrets()
        self._sdk = _import_sdk()
        endpoint = config.resolved_endpoint()
        options: dict[str, Any] = {
            "signature": config.signature,
            "region": config.resolved_region(),
        }
        if config.signature == "obs":
            # Path-style (any IP endpoint) turns the OBS signature into V2 unless in workflow mode.
            options["client_mode"] = "workflow"
        self._client = _closing_client_class(self._sdk)(
            access_key_id=creds.access_key,
            secret_access_key=creds.secret_key,
            security_token=creds.security_token,
            server=endpoint,
            long_conn_mode=True,
            max_retry_count=0,
            timeout=max(1, round(config.timeout)),
            chunk_size=READ_CHUNK,
            **options,
        )
        # The shortest wait for an answer seen (seconds): how far the endpoint is
        # (transfer.default_jobs).
        self.fastest_request: float | None = None
        self._sdk_dir = os.path.dirname(os.path.abspath(self._sdk.__file__)) + os.sep

    def _call(self, action: str, bucket: str, key: str | None, call: Callable[[], T]) -> T:
        """Run ``call`` (one SDK request), map its failure, retry what is worth retrying."""
        return call_retrying(
            functools.partial(self._attempt, action, bucket, key, call),
            retry_if=is_transient,
            retries=self.config.retries,
            timeout=self.config.timeout,
        )

    def _attempt(self, action: str, bucket: str, key: str | None, call: Callable[[], T]) -> T:
        """One try of ``call``: its result, or its failure as a ``StorageError``."""
        started, cpu = time.perf_counter(), time.thread_time()
        failure: Exception | None = None
        try:
            result = call()
        except MajobError:
            raise  # already ours (e.g. a failed MD5 check while streaming)
        except Exception as error:
            if not self._is_sdk_failure(error):
                raise  # a bug in majob: its traceback must not be hidden
            failure = error
        if failure is not None:
            # Raised outside the ``except``, chained to a masked stand-in: the SDK's exception
            # may quote a secret, and as a cause or context it would be in every traceback.
            raise storage_error(
                failure, action=action, bucket=bucket, key=key, secrets=self._secrets
            ) from Masker(self._secrets).exception(failure)
        if result is None:
            raise malformed(action, "no answer", bucket=bucket, key=key)
        # The wait: what the request took but this thread's own CPU (signing, parsing a page).
        took = (time.perf_counter() - started) - (time.thread_time() - cpu)
        if self.fastest_request is None or took < self.fastest_request:
            self.fastest_request = took  # a race only loses one sample
        if int(getattr(result, "status", 0) or 0) >= 300:
            raise storage_error(
                result, action=action, bucket=bucket, key=key, secrets=self._secrets
            )
        return result

    def probe_latency(self, bucket: str, times: int = 2) -> float | None:
        """Ask ``times`` small questions (HEAD bucket, on a kept-alive connection) and return
        the shortest wait seen since the store was opened (None if none was answered)."""
        for _ in range(times):
            with contextlib.suppress(MajobError):
                self._call("head bucket", bucket, None, lambda: self._client.headBucket(bucket))
        return self.fastest_request

    def _is_sdk_failure(self, error: BaseException) -> bool:
        """The network failed, or the SDK raised (its plain ``Exception``s included)."""
        return (
            isinstance(error, NETWORK_ERRORS)
            or type(error) is Exception
            or raised_in(error, self._sdk_dir)
        )

    def _read(
        self, action: str, bucket: str, key: str | None, result: Any, read: Callable[[Any], T]
    ) -> T:
        """``read(result.body)``; a missing body or field (the SDK could not parse the answer)
        is a ``StorageError``, with the parse failure as its cause."""
        if getattr(result, "body", None) is None:
            raise malformed(action, "an answer", bucket=bucket, key=key)
        try:
            return read(result.body)
        except (AttributeError, TypeError, ValueError, KeyError) as error:
            raise malformed(action, "an answer", bucket=bucket, key=key) from error

    def close(self) -> None:
        self._client.close()
