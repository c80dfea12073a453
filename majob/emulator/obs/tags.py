"""Object tags in the fake OBS: the rules OBS sets on a tag set, read from a ``Tagging``
document (PutObjectTagging) or from an ``x-amz-tagging`` / ``x-obs-tagging`` header (a PUT, an
initiated upload, a copy with ``REPLACE``), and the document GetObjectTagging answers.

The rules are OBS's API reference ("Adding Object Tags"): at most 10 tags an object; a key is 1
to 128 characters, unique, case-sensitive; a value 0 to 255 characters; neither holds any of
``,/|<>=*\\``. A tag set that breaks one is refused whole with ``400 InvalidTag`` (S3's code).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import parse_qsl

from majob.emulator.obs.errors import ObsServiceError, invalid_argument, malformed
from majob.emulator.obs.wire import Xml, child_text, children, local_name, parse_xml

MAX_TAGS = 10
MAX_KEY_CHARS = 128
MAX_VALUE_CHARS = 255
FORBIDDEN_CHARS = frozenset(",/|<>=*\\")


def invalid_tag(message: str) -> ObsServiceError:
    return ObsServiceError(400, "InvalidTag", message)


def check_tags(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The tag set ``pairs`` make, or ``InvalidTag`` naming the first rule one breaks."""
    listed = list(pairs)
    if len(listed) > MAX_TAGS:
        raise invalid_tag(f"Object tags cannot be greater than {MAX_TAGS}")
    tags: dict[str, str] = {}
    for key, value in listed:
        if not key or len(key) > MAX_KEY_CHARS:
            raise invalid_tag(
                f"The TagKey you have provided is invalid: {key!r} (1 to {MAX_KEY_CHARS} "
                "characters)"
            )
        if len(value) > MAX_VALUE_CHARS:
            raise invalid_tag(
                f"The TagValue you have provided is too long: {len(value)} characters for "
                f"key {key!r} (at most {MAX_VALUE_CHARS})"
            )
        for text, what in ((key, "TagKey"), (value, "TagValue")):
            bad = sorted(FORBIDDEN_CHARS & set(text))
            if bad:
                raise invalid_tag(
                    f"The {what} you have provided is invalid: {text!r} holds {''.join(bad)!r}"
                    f" (none of {''.join(sorted(FORBIDDEN_CHARS))!r} may appear)"
                )
        if key in tags:
            raise invalid_tag(f"Cannot provide multiple Tags with the same key: {key!r}")
        tags[key] = value
    return tags


def tags_from_document(body: bytes) -> dict[str, str]:
    """The tag set of a ``<Tagging><TagSet><Tag><Key/><Value/></Tag>...`` document."""
    root = parse_xml(body)
    tag_sets = children(root, "TagSet")
    if local_name(root.tag) != "Tagging" or len(tag_sets) != 1:
        raise malformed()
    pairs = []
    for tag in children(tag_sets[0], "Tag"):
        key, value = child_text(tag, "Key"), child_text(tag, "Value")
        if key is None or value is None:
            raise malformed()
        pairs.append((key, value))
    return check_tags(pairs)


def tags_from_header(header: str | None, name: str) -> dict[str, str]:
    """The tag set of an ``x-amz-tagging`` header: URL-encoded query parameters."""
    if header is None:
        return {}
    try:
        pairs = parse_qsl(header, keep_blank_values=True, strict_parsing=bool(header))
    except ValueError:
        pairs = None
    if pairs is None or len({key for key, _ in pairs}) != len(pairs):
        raise invalid_argument(
            f"The header '{name}' shall be encoded as UTF-8 then URLEncoded URL query "
            "parameters without tag name duplicates.",
            name,
            header,
        )
    return check_tags(pairs)


def tagging_document(tags: Mapping[str, str], namespace: str) -> bytes:
    """GetObjectTagging's answer: every tag, or an empty ``TagSet``."""
    xml = Xml("Tagging", namespace).open("TagSet")
    for key, value in tags.items():
        xml.open("Tag").leaf("Key", key).leaf("Value", value).close("Tag")
    return xml.close("TagSet").bytes()
