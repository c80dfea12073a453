"""Loading the official ModelArts client (``huaweicloudsdkcore`` + ``huaweicloudsdkmodelarts``):
the only module that imports them, and only when a service is opened.

Also the two things majob adds to the SDK: an exception handler that keeps the
``error_solution`` of an error body (the SDK's own drops it), and silence on the SDK's logger.

The SDK's ``v1`` and ``v1.model`` package ``__init__`` files import all ~1,280 model modules at
once, for the twenty majob touches. ``_lazy_package`` registers the two packages with their names
loaded on first use (PEP 562 ``__getattr__``), read from the ``from <module> import <Name>``
lines of each ``__init__``; every name still resolves as with the eager import (a test proves
it). The SDK offers no lazy mode, and the standard library's ``importlib.util.LazyLoader`` does
not help: the first attribute read runs the whole ``__init__`` (measured: all 1,277 modules load,
500-580 ms). Measured on the development machine, medians of 9 (issue 19): importing the client
takes 290 ms lazily and 680 ms eagerly; ``majob list --profile emulator`` 630 ms against
1,000 ms; a ``majob submit`` to the emulator 730 ms against 1,260 ms.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import json
import logging
import re
import sys
from pathlib import Path
from typing import Any

from majob.errors import UserInputError

INSTALL_HINT = "install the ModelArts extra: pip install 'majob[modelarts]'"
_IMPORT_LINE = re.compile(r"^from ([\w.]+) import (\w+)\s*$", re.MULTILINE)
_LAZY_PACKAGES = ("huaweicloudsdkmodelarts.v1", "huaweicloudsdkmodelarts.v1.model")


def _lazy_package(name: str) -> None:
    """Register package ``name`` with its names loaded on first use (the client's deserialiser
    asks for them with ``hasattr``): a model's module is imported when its name is first read."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None or spec.submodule_search_locations is None:
        return
    where = {
        attr: module for module, attr in _IMPORT_LINE.findall(Path(spec.origin).read_text("utf-8"))
    }
    package = importlib.util.module_from_spec(spec)

    def load(attr: str) -> Any:
        target = where.get(attr)
        if target is None:
            raise AttributeError(f"module {name!r} has no attribute {attr!r}")
        value = getattr(importlib.import_module(target), attr)
        setattr(package, attr, value)
        return value

    package.__getattr__ = load  # type: ignore[method-assign]
    sys.modules[name] = package
    parent, _, last = name.rpartition(".")
    setattr(sys.modules[parent], last, package)


def import_sdk() -> tuple[Any, Any, Any]:
    """The SDK's ``credentials`` module, ``HttpConfig`` and ``v1`` package; a ``UserInputError``
    with the install hint when it is missing."""
    try:
        from huaweicloudsdkcore.auth import credentials
        from huaweicloudsdkcore.http.http_config import HttpConfig

        for name in _LAZY_PACKAGES:
            _lazy_package(name)
        from huaweicloudsdkmodelarts import v1
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise UserInputError(
            "the ModelArts SDK (huaweicloudsdkmodelarts) is not installed", hint=INSTALL_HINT
        ) from error
    return credentials, HttpConfig, v1


@functools.cache
def solution_handler_class() -> Any:
    """The SDK's default exception handler, plus the ``error_solution`` of the error body."""
    from huaweicloudsdkcore.exceptions.exception_handler import DefaultExceptionHandler
    from huaweicloudsdkcore.exceptions.exceptions import ServiceResponseException

    class SolutionHandler(DefaultExceptionHandler):  # type: ignore[misc]
        def handle_exception(self, request: Any, response: Any) -> None:
            try:
                super().handle_exception(request, response)
            except ServiceResponseException as error:
                try:
                    body = json.loads(response.text)
                except ValueError:
                    body = None
                solution = body.get("error_solution") if isinstance(body, dict) else None
                error.error_solution = str(solution) if solution else None
                raise

    return SolutionHandler


@functools.cache
def silence_sdk_logger(client_class: type) -> None:
    """The SDK logs each failed try on a logger of its own (``ConnectionException occurred.
    ...``), which nothing handles, so logging's last resort writes it to stderr: raw, once per
    try, and quoting what failed unmasked. majob reports each failure itself, as one line."""
    sdk_logger = logging.getLogger(f"HuaweiCloud-SDK-{client_class.__name__}")
    sdk_logger.addHandler(logging.NullHandler())
    sdk_logger.propagate = False  # as the SDK sets it: an application's root handler gets none
