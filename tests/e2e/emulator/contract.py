"""What a contract test asks of an answer: every documented field present in the SDK's typed
response, and no key in the raw JSON the SDK's model does not know (an invented field)."""

from __future__ import annotations

import json
import re
from typing import Any

from huaweicloudsdkmodelarts.v1 import model as sdk_models


def missing(typed: Any, paths: list[str]) -> list[str]:
    """The ``paths`` (``a.b``, ``a[].b`` for each list item) that are None or absent."""
    gone: list[str] = []
    for path in paths:
        _walk(typed, path.split("."), path, gone)
    return gone


def _walk(value: Any, parts: list[str], path: str, gone: list[str]) -> None:
    if not parts:
        return
    name, rest = parts[0], parts[1:]
    each = name.endswith("[]")
    found = getattr(value, name.removesuffix("[]"), None)
    if found is None:
        gone.append(path)
        return
    if each:
        if not found:
            gone.append(f"{path} (empty)")
        for item in found:
            _walk(item, rest, path, gone)
    else:
        _walk(found, rest, path, gone)


def unknown_keys(raw: bytes | str, model_name: str) -> list[str]:
    """Keys of the raw JSON answer that model ``model_name`` (and its parts) do not have."""
    if not raw:
        return []  # an answer with no body (202 of a delete)
    data = json.loads(raw)
    out: list[str] = []
    _check(data, model_name, "", out)
    return out


def _check(data: Any, type_name: str, where: str, out: list[str]) -> None:
    listed = re.fullmatch(r"list\[(.+)\]", type_name)
    if listed:
        for index, item in enumerate(data if isinstance(data, list) else []):
            _check(item, listed[1], f"{where}[{index}]", out)
        return
    mapped = re.fullmatch(r"dict\(str, (.+)\)", type_name)
    if mapped:
        for key, item in (data if isinstance(data, dict) else {}).items():
            _check(item, mapped[1], f"{where}.{key}", out)
        return
    cls = getattr(sdk_models, type_name, None)
    if cls is None or not isinstance(data, dict):
        return  # a plain type (str, int, object...)
    by_key = {key: attr for attr, key in cls.attribute_map.items()}
    for key, item in data.items():
        if key not in by_key:
            out.append(f"{where}.{key}".lstrip("."))
            continue
        _check(item, cls.openapi_types[by_key[key]], f"{where}.{key}", out)
