"""The ``BlobStore`` port: where a task's large parts live (an S3 bucket on AWS).

A part too big to keep in a task's items is stored as one object, content-addressed under the
task's own prefix (:func:`a2a_serverless.blobs.blob_key`), with only a pointer in the task. Objects
are written before the task items that point at them, and never changed: a write that fails leaves
at most an object nobody points at (the bucket's lifecycle removes it with the task's TTL).
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["BlobError", "BlobStore"]


class BlobError(RuntimeError):
    """A stored part could not be written or read (the object store failed, or the object is gone)."""


class BlobStore(Protocol):
    def put(self, key: str, data: bytes, media_type: str) -> None:
        """Store ``data`` under ``key`` (idempotent: the same key always holds the same bytes).
        Raises :class:`BlobError`."""
        ...

    def get(self, key: str) -> bytes:
        """The object's bytes. Raises :class:`BlobError` when it cannot be read."""
        ...

    def url(self, key: str, *, filename: str, media_type: str, expires_seconds: int) -> str | None:
        """A URL anyone holding it may GET the object from until it expires (a presigned S3 URL),
        always served as an attachment named ``filename`` (or a name the store makes when it is
        empty), and with ``media_type`` only when that type cannot run script in a browser (else
        as opaque bytes); None when this store cannot give one (then parts are always sent inline)."""
        ...
