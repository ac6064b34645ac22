"""``BlobStore`` in memory (tests, benchmarks, ``A2A_STORE=memory``). It gives no URLs, so stored
parts are always returned inline: an in-process server has no response limit to keep within."""

from __future__ import annotations

import threading

from ..ports.blobs import BlobError

__all__ = ["MemoryBlobStore"]


class MemoryBlobStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._objects: dict[str, tuple[bytes, str]] = {}

    def put(self, key: str, data: bytes, media_type: str) -> None:
        with self._lock:
            self._objects[key] = (bytes(data), media_type)

    def get(self, key: str) -> bytes:
        with self._lock:
            found = self._objects.get(key)
        if found is None:
            raise BlobError(f"stored part {key} is missing")
        return found[0]

    def url(self, key: str, *, filename: str, media_type: str, expires_seconds: int) -> str | None:
        return None

    def keys(self) -> list[str]:
        """Every stored key (for tests)."""
        with self._lock:
            return sorted(self._objects)
