"""``BlobStore`` on the template's S3 bucket ``BlobsBucket`` (encrypted, private, TLS only).

A client that is not sent a part inline gets a presigned GET URL. What S3 serves through it is
decided here, whatever the part says, because the page it would render runs on the bucket's origin
(on AWS, the bucket's domain; on the local stack, moto's, which answers every AWS call):

* always as an **attachment** (``response-content-disposition``), named as the part's ``filename``
  (RFC 6266, with the exact name RFC 5987-encoded beside an ASCII fallback) or, without one,
  ``part-<digest>.<ext>``, so a browser saves it and never renders it;
* with its own media type only when that type is **passive** (:data:`PASSIVE_MEDIA_TYPES`: plain
  text, JSON, PDF, archives, raster images, audio, video): anything else (HTML, SVG, XML,
  JavaScript, a type this list does not know) is served as ``application/octet-stream``.
  ``X-Content-Type-Options: nosniff`` cannot be asked for through a presigned URL, so both
  defences are applied together.

Objects are put with the same served type and ``Content-Disposition: attachment``, so a GET that
asks for no override (the bucket is private: only a presigned one can) is served alike. The
A2A client still sees the part's ``mediaType`` as it was produced.

The client signs with SigV4 (S3 refuses SigV2 URLs for buckets created since 2020), is path-style,
so a URL works against any endpoint (the local stack's moto on 127.0.0.1 as well as S3), and uses
the standard retry mode. (moto checks neither signatures nor expiry: that a URL works on AWS is not
tested here.)
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import quote

from botocore.exceptions import BotoCoreError, ClientError

from ..aws import s3_client
from ..ports.blobs import BlobError

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

__all__ = ["OPAQUE_MEDIA_TYPE", "PASSIVE_MEDIA_TYPES", "S3BlobStore", "attachment", "served_media_type"]

OPAQUE_MEDIA_TYPE = "application/octet-stream"

PASSIVE_MEDIA_TYPES: dict[str, str] = {
    "text/plain": ".txt",
    "text/csv": ".csv",
    "text/markdown": ".md",
    "application/json": ".json",
    "application/pdf": ".pdf",
    "application/zip": ".zip",
    "application/gzip": ".gz",
    "application/octet-stream": ".bin",
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "image/avif": ".avif",
    "image/bmp": ".bmp",
    "audio/mpeg": ".mp3",
    "audio/ogg": ".ogg",
    "audio/wav": ".wav",
    "audio/webm": ".weba",
    "audio/flac": ".flac",
    "audio/aac": ".aac",
    "video/mp4": ".mp4",
    "video/webm": ".webm",
    "video/ogg": ".ogv",
}
"""The media types served as themselves, each with the extension of a name made for it: an
allowlist, because a browser runs script in more types than any denylist names."""

_NAME_CHARS = r"[a-z0-9][a-z0-9!#$&^_.+-]*"
_MEDIA_TYPE = re.compile(
    rf"({_NAME_CHARS}/{_NAME_CHARS})\s*((?:;\s*{_NAME_CHARS}\s*=\s*(?:{_NAME_CHARS}|\"[^\"\\\x00-\x1f]*\")\s*)*)"
)
_CHARSET = re.compile(rf";\s*charset\s*=\s*\"?({_NAME_CHARS})\"?")
_NAME_LIMIT = 200


def served_media_type(media_type: str) -> str:
    """The ``Content-Type`` S3 serves a part of ``media_type`` with: the type itself (and its
    charset) when it is passive, else ``application/octet-stream``."""
    match = _MEDIA_TYPE.fullmatch(media_type.strip().lower())
    if match is None or match.group(1) not in PASSIVE_MEDIA_TYPES:
        return OPAQUE_MEDIA_TYPE
    charset = _CHARSET.search(match.group(2))
    return match.group(1) + (f"; charset={charset.group(1)}" if charset else "")


def attachment(filename: str) -> str:
    """A ``Content-Disposition`` saving the object as ``filename`` (RFC 6266 section 4.3: an ASCII
    ``filename`` for old clients, the exact name as RFC 5987 ``filename*``)."""
    name = filename[:_NAME_LIMIT]
    fallback = "".join(c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in name)
    exact = quote(name.encode("utf-8", "replace"), safe="")
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{exact}"


def _made_name(key: str, served_type: str) -> str:
    """A name for a part that has none: its digest (the key's last segment) and the extension of
    the type it is served as (:func:`served_media_type`: a passive type's own, else ``.bin``)."""
    return f"part-{key.rsplit('/', 1)[-1][:16]}{PASSIVE_MEDIA_TYPES[served_type.partition(';')[0]]}"


class S3BlobStore:
    def __init__(self, bucket: str, client: S3Client | None = None) -> None:
        if not bucket:
            raise ValueError("an S3 bucket name is required")
        self._bucket = bucket
        self._client = client

    @property
    def client(self) -> S3Client:
        if self._client is None:
            self._client = s3_client()
        return self._client

    def put(self, key: str, data: bytes, media_type: str) -> None:
        try:
            self.client.put_object(
                Bucket=self._bucket,
                Key=key,
                Body=data,
                ContentType=served_media_type(media_type),
                ContentDisposition="attachment",
            )
        except (ClientError, BotoCoreError) as exc:
            raise BlobError(f"could not store part {key}: {_reason(exc)}") from exc

    def get(self, key: str) -> bytes:
        try:
            body = self.client.get_object(Bucket=self._bucket, Key=key)["Body"]
            try:
                return bytes(body.read())
            finally:
                body.close()
        except (ClientError, BotoCoreError) as exc:
            raise BlobError(f"could not read stored part {key}: {_reason(exc)}") from exc

    def url(self, key: str, *, filename: str, media_type: str, expires_seconds: int) -> str | None:
        served = served_media_type(media_type)
        params = {
            "Bucket": self._bucket,
            "Key": key,
            "ResponseContentType": served,
            "ResponseContentDisposition": attachment(filename or _made_name(key, served)),
        }
        try:
            return str(self.client.generate_presigned_url("get_object", Params=params, ExpiresIn=expires_seconds))
        except (ClientError, BotoCoreError) as exc:
            raise BlobError(f"could not sign a URL for stored part {key}: {_reason(exc)}") from exc


def _reason(exc: Exception) -> str:
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        return f"{error.get('Code', 'error')}: {error.get('Message', '')}".rstrip(": ")
    return type(exc).__name__
