"""Bucket-level requests of the fake OBS: create, head, delete, location, the object listings
(v1 and v2, with ``encoding-type=url``), DeleteObjects, the list of multipart uploads, and the
versioning status and object versions of ``versions.py``."""

from __future__ import annotations

from urllib.parse import quote

from majob.emulator.obs.errors import ObsServiceError, malformed
from majob.emulator.obs.models import MAX_DELETE_KEYS, check_key
from majob.emulator.obs.versions import VersionHandlers
from majob.emulator.obs.wire import (
    Response,
    Xml,
    child_text,
    children,
    continuation_token,
    find_text,
    int_arg,
    iso_time,
    parse_continuation_token,
    parse_xml,
)

LIST_ARGS = {
    "prefix", "marker", "max-keys", "delimiter", "encoding-type", "list-type",
    "continuation-token", "start-after", "fetch-owner",
}  # fmt: skip


def not_emulated(method: str, args: dict[str, str]) -> ObsServiceError:
    return ObsServiceError(
        501, "NotImplemented", f"{method} with {', '.join(sorted(args))} is not emulated"
    )


class BucketHandlers(VersionHandlers):
    def _bucket_request(self, bucket: str) -> Response:
        method, args = self.command, self.args
        if method == "PUT" and not args:
            body = self._read_small()
            location = find_text(body, "LocationConstraint") or find_text(body, "Location")
            self.backend.create_bucket(bucket, location)
            return Response(200, {"Location": f"/{bucket}"})
        if method == "HEAD" and not args:
            found = self.backend.bucket(bucket)
            return Response(200, {f"x-{self.family}-bucket-location": found.location})
        if method == "DELETE" and not args:
            self.backend.delete_bucket(bucket)
            return Response(204)
        if method == "GET" and "location" in args:
            return self._location(bucket)
        if method == "GET" and "uploads" in args:
            return self._list_uploads(bucket)
        if method == "GET" and "versioning" in args:
            return self._versioning(bucket)
        if method == "GET" and "versions" in args:
            return self._list_versions(bucket)
        if method == "GET" and (not args or set(args) <= LIST_ARGS):
            return self._list_objects(bucket)
        if method == "POST" and "delete" in args:
            return self._delete_many(bucket)
        raise not_emulated(method, args)

    def _location(self, bucket: str) -> Response:
        found = self.backend.bucket(bucket)
        if self.family == "obs":
            xml = Xml("CreateBucketConfiguration", self._ns()).leaf("Location", found.location)
        else:
            xml = Xml("LocationConstraint", self._ns()).text(found.location)
        return Response(200, body=xml.bytes())

    def _list_objects(self, bucket: str) -> Response:
        args = self.args
        v2 = args.get("list-type") == "2"
        prefix = args.get("prefix", "")
        delimiter = args.get("delimiter", "")
        max_keys = int_arg(args, "max-keys", 1000)
        encoding = args.get("encoding-type")
        if encoding is not None and encoding != "url":
            raise ObsServiceError(
                400, "InvalidArgument", "Invalid Encoding Method specified in Request"
            )
        if v2:
            token = args.get("continuation-token")
            marker = parse_continuation_token(token) if token else args.get("start-after", "")
        else:
            marker = args.get("marker", "")
        listing = self.backend.list_objects(
            bucket, prefix=prefix, marker=marker, delimiter=delimiter, max_keys=max_keys
        )

        def enc(text: str) -> str:
            # S3 and OBS percent-encode every key-like value (a control character, a space...).
            return quote(text, safe="/") if encoding else text

        xml = Xml("ListBucketResult", self._ns())
        xml.leaf("Name", bucket).leaf("Prefix", enc(prefix))
        if v2:
            if "continuation-token" in args:
                xml.leaf("ContinuationToken", args["continuation-token"])
            if "start-after" in args:
                xml.leaf("StartAfter", enc(args["start-after"]))
            xml.leaf("KeyCount", len(listing.objects) + len(listing.common_prefixes))
        else:
            xml.leaf("Marker", enc(marker))
        xml.leaf("MaxKeys", max_keys)
        if delimiter:
            xml.leaf("Delimiter", enc(delimiter))
        if encoding:
            xml.leaf("EncodingType", "url")
        xml.leaf("IsTruncated", listing.is_truncated)
        if listing.next_marker is not None:
            if v2:
                xml.leaf("NextContinuationToken", continuation_token(listing.next_marker))
            else:
                xml.leaf("NextMarker", enc(listing.next_marker))
        for obj in listing.objects:
            xml.open("Contents").leaf("Key", enc(obj.key))
            xml.leaf("LastModified", iso_time(obj.last_modified)).leaf("ETag", f'"{obj.etag}"')
            xml.leaf("Size", obj.size)
            if not v2 or args.get("fetch-owner") == "true":
                xml.open("Owner").leaf("ID", "majobfakeowner").leaf("DisplayName", "majob")
                xml.close("Owner")
            xml.leaf("StorageClass", obj.storage_class).close("Contents")
        for common in listing.common_prefixes:
            xml.open("CommonPrefixes").leaf("Prefix", enc(common)).close("CommonPrefixes")
        return Response(200, body=xml.bytes())

    def _list_buckets(self) -> Response:
        xml = Xml("ListAllMyBucketsResult", self._ns())
        xml.open("Owner").leaf("ID", "majobfakeowner").leaf("DisplayName", "majob").close("Owner")
        xml.open("Buckets")
        for bucket in self.backend.list_buckets():
            xml.open("Bucket").leaf("Name", bucket.name)
            xml.leaf("CreationDate", iso_time(bucket.created))
            if self.family == "obs":
                xml.leaf("Location", bucket.location)
            xml.close("Bucket")
        xml.close("Buckets")
        return Response(200, body=xml.bytes())

    def _delete_many(self, bucket: str) -> Response:
        """DeleteObjects: the whole request is checked before any key is deleted (an invalid
        entry deletes nothing), as S3 does."""
        body = self._read_checked()
        self.backend.bucket(bucket)
        root = parse_xml(body)
        quiet = (child_text(root, "Quiet") or "false").strip().lower() == "true"
        keys = [child_text(node, "Key") for node in children(root, "Object")]
        if not keys or len(keys) > MAX_DELETE_KEYS:
            raise malformed()
        checked: list[str] = []
        for key in keys:
            if not key:
                raise malformed()
            check_key(key)
            checked.append(key)
        xml = Xml("DeleteResult", self._ns())
        for key in checked:
            self.backend.delete_object(bucket, key)
            if not quiet:
                xml.open("Deleted").leaf("Key", key).close("Deleted")
        return Response(200, body=xml.bytes())

    def _list_uploads(self, bucket: str) -> Response:
        prefix = self.args.get("prefix", "")
        encode = self.args.get("encoding-type") == "url"
        uploads = self.backend.list_uploads(bucket, prefix)

        def enc(text: str) -> str:
            return quote(text, safe="/") if encode else text

        xml = Xml("ListMultipartUploadsResult", self._ns())
        xml.leaf("Bucket", bucket).leaf("KeyMarker", "").leaf("UploadIdMarker", "")
        xml.leaf("Prefix", enc(prefix)).leaf("MaxUploads", 1000).leaf("IsTruncated", False)
        if encode:
            xml.leaf("EncodingType", "url")
        for upload in uploads:
            xml.open("Upload").leaf("Key", enc(upload.key)).leaf("UploadId", upload.upload_id)
            xml.open("Initiator").leaf("ID", "majobfakeowner").close("Initiator")
            xml.open("Owner").leaf("ID", "majobfakeowner").close("Owner")
            xml.leaf("StorageClass", upload.storage_class)
            xml.leaf("Initiated", iso_time(upload.initiated))
            xml.close("Upload")
        return Response(200, body=xml.bytes())
