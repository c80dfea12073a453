"""Versioning as the fake OBS has it: every bucket is one whose versioning was never enabled.

GetBucketVersioning answers a ``VersioningConfiguration`` with no ``Status`` (OBS's API
reference: "If versioning is not configured for a bucket, no versioning status information will
be returned"), and ListObjectVersions lists each object as its one version, ``null`` and latest
(as S3 lists the objects of such a bucket), paged by ``key-marker`` with ``prefix``,
``delimiter`` and ``max-keys``. Enabling versioning is not emulated (``501``).
"""

from __future__ import annotations

from urllib.parse import quote

from majob.emulator.obs.errors import ObsServiceError, invalid_argument
from majob.emulator.obs.request import RequestContext
from majob.emulator.obs.wire import Response, Xml, int_arg, iso_time

NULL_VERSION = "null"


class VersionHandlers(RequestContext):
    def _versioning(self, bucket: str) -> Response:
        self.backend.bucket(bucket)
        return Response(200, body=Xml("VersioningConfiguration", self._ns()).bytes())

    def _list_versions(self, bucket: str) -> Response:
        args = self.args
        prefix, delimiter = args.get("prefix", ""), args.get("delimiter", "")
        key_marker = args.get("key-marker", "")
        version_marker = args.get("version-id-marker")
        max_keys = int_arg(args, "max-keys", 1000)
        encoding = args.get("encoding-type")
        if encoding is not None and encoding != "url":
            raise ObsServiceError(
                400, "InvalidArgument", "Invalid Encoding Method specified in Request"
            )
        if version_marker is not None and not key_marker:
            raise invalid_argument(
                "A version-id marker cannot be specified without a key marker.",
                "version-id-marker",
                version_marker,
            )
        if version_marker not in (None, "", NULL_VERSION):
            raise invalid_argument(
                "Invalid version id specified", "version-id-marker", version_marker
            )
        listing = self.backend.list_objects(
            bucket, prefix=prefix, marker=key_marker, delimiter=delimiter, max_keys=max_keys
        )

        def enc(text: str) -> str:
            return quote(text, safe="/") if encoding else text

        xml = Xml("ListVersionsResult", self._ns())
        xml.leaf("Name", bucket).leaf("Prefix", enc(prefix)).leaf("KeyMarker", enc(key_marker))
        xml.leaf("VersionIdMarker", version_marker or "").leaf("MaxKeys", min(max_keys, 1000))
        if delimiter:
            xml.leaf("Delimiter", enc(delimiter))
        if encoding:
            xml.leaf("EncodingType", "url")
        xml.leaf("IsTruncated", listing.is_truncated)
        if listing.next_marker is not None:
            xml.leaf("NextKeyMarker", enc(listing.next_marker))
            xml.leaf("NextVersionIdMarker", NULL_VERSION)
        for obj in listing.objects:
            xml.open("Version").leaf("Key", enc(obj.key)).leaf("VersionId", NULL_VERSION)
            xml.leaf("IsLatest", True).leaf("LastModified", iso_time(obj.last_modified))
            xml.leaf("ETag", f'"{obj.etag}"').leaf("Size", obj.size)
            xml.open("Owner").leaf("ID", "majobfakeowner").leaf("DisplayName", "majob")
            xml.close("Owner").leaf("StorageClass", obj.storage_class).close("Version")
        for common in listing.common_prefixes:
            xml.open("CommonPrefixes").leaf("Prefix", enc(common)).close("CommonPrefixes")
        return Response(200, body=xml.bytes())
