"""``BlobStore`` on the template's S3 bucket ``BlobsBucket`` (encrypted, private, TLS only).

Objects are put with their media type; a client that is not sent a part inline gets a presigned GET
URL that serves it with that type and, when the part has one, its file name as the download name.
The client signs with SigV4 (S3 refuses SigV2 URLs for buckets created since 2020), is path-style, so
a URL works against any endpoint (the local stack's moto on 127.0.0.1 as well as S3), and uses the
standard retry mode. (moto checks neither signatures nor expiry: that a URL works on AWS is not
tested here.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

from botocore.exceptions import BotoCoreError, ClientError

from ..aws import s3_client
from ..ports.blobs import BlobError

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

__all__ = ["S3BlobStore"]


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
                Bucket=self._bucket, Key=key, Body=data, ContentType=media_type or "application/octet-stream"
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
        params: dict[str, str] = {"Bucket": self._bucket, "Key": key}
        if media_type:
            params["ResponseContentType"] = media_type
        if filename:
            # RFC 6266 / 5987: an ASCII fallback and the exact name, percent-encoded.
            fallback = "".join(c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in filename)
            params["ResponseContentDisposition"] = (
                f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"
            )
        try:
            return str(self.client.generate_presigned_url("get_object", Params=params, ExpiresIn=expires_seconds))
        except (ClientError, BotoCoreError) as exc:
            raise BlobError(f"could not sign a URL for stored part {key}: {_reason(exc)}") from exc


def _reason(exc: Exception) -> str:
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        return f"{error.get('Code', 'error')}: {error.get('Message', '')}".rstrip(": ")
    return type(exc).__name__
