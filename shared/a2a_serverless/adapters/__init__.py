"""Adapters: implementations of :mod:`a2a_serverless.ports`.

Imported lazily, so ``from a2a_serverless.adapters import MemoryTaskStore`` does not load boto3.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .dynamodb.store import DynamoDBTaskStore
    from .memory_blobs import MemoryBlobStore
    from .memory_store import MemoryTaskStore
    from .s3_blobs import S3BlobStore
    from .sqs import SqsDeliveryQueue, SqsWorkQueue

__all__ = ["DynamoDBTaskStore", "MemoryBlobStore", "MemoryTaskStore", "S3BlobStore", "SqsDeliveryQueue", "SqsWorkQueue"]

_MODULES = {
    "DynamoDBTaskStore": ".dynamodb.store",
    "MemoryBlobStore": ".memory_blobs",
    "MemoryTaskStore": ".memory_store",
    "S3BlobStore": ".s3_blobs",
    "SqsDeliveryQueue": ".sqs",
    "SqsWorkQueue": ".sqs",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module, __name__), name)
