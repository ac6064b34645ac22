"""Large parts: stored as objects, pointed at from the task, sent as the platform allows.

**On the way in** (every write of a task: its creation, each commit of a run's events, CancelTask,
SendMessage on an existing task; the task itself whenever its snapshot is written, the only place
it is stored whole, so a text part that grows by appended chunks is stored once per snapshot, not
once per commit) :class:`PartOffloader` replaces each part whose content is
``blob_threshold_bytes`` or more (text as UTF-8, raw bytes, data as JSON) with a *reference*: a part
whose ``url`` is ``a2a-blob:<kind>:<size>:<sha256>``, keeping ``filename``, ``mediaType`` and
``metadata``. The content goes to the :class:`~a2a_serverless.ports.BlobStore` first, keyed by the
task and the content's digest (:func:`blob_key`), so the task items that point at it are written
only once it is stored. A message or artifact whose small parts still add up to more than
:data:`CONTAINER_BYTES` has its largest parts stored the same way, so no event outgrows an item.

**On the way out** (:class:`PartPresenter`) a reference becomes the part as it was produced (text,
raw or data) while the response's inline budget lasts, and otherwise a ``url`` part: a presigned
GET URL, short-lived, with the part's ``mediaType`` and ``filename`` (the URL itself always serves
an attachment, and active types as opaque bytes: the store decides, see
:mod:`a2a_serverless.adapters.s3_blobs`). Budgets (settings): a buffered response, an SSE event, a
push notification; the executor is always given everything inline. ``docs/large-content.md`` says
which a client gets when, and why.

A reference's object is found from the scope and task it is read in, never from the reference
alone: a client cannot point a task at another task's (or tenant's) objects, and SendMessage refuses
``a2a-blob:`` URLs from clients (:func:`check_no_references`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Literal, TypeVar, cast

from .errors import ContentUnavailableError, FieldViolation, InvalidParamsError
from .json_types import Json
from .models import (
    Artifact,
    Message,
    Part,
    SendMessageResponse,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from .ports.blobs import BlobError, BlobStore
from .ports.store import Scope, TaskRecord

__all__ = [
    "CONTAINER_BYTES",
    "REF_SCHEME",
    "PartOffloader",
    "PartPresenter",
    "PartRef",
    "blob_key",
    "check_no_references",
    "has_references",
    "map_parts",
]

logger = logging.getLogger(__name__)

REF_SCHEME = "a2a-blob:"
CONTAINER_BYTES = 128 * 1024
"""The most content one message or artifact keeps inline in the task's items, whatever its parts'
sizes: the rest of its parts, largest first, are stored as objects."""

Kind = Literal["text", "raw", "data"]
_DEFAULT_MEDIA_TYPE: dict[str, str] = {
    "text": "text/plain; charset=utf-8",
    "raw": "application/octet-stream",
    "data": "application/json",
}
_RECENT_KEYS = 4096

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class PartRef:
    """What a reference part's ``url`` says: the content's kind, size in bytes and SHA-256."""

    kind: Kind
    size: int
    digest: str

    @property
    def url(self) -> str:
        return f"{REF_SCHEME}{self.kind}:{self.size}:{self.digest}"

    @classmethod
    def of(cls, part: Part) -> PartRef | None:
        url = part.url
        if not url or not url.startswith(REF_SCHEME):
            return None
        kind, _, rest = url[len(REF_SCHEME) :].partition(":")
        size, _, digest = rest.partition(":")
        if kind not in _DEFAULT_MEDIA_TYPE or not size.isdigit() or len(digest) != 64:
            return None
        return cls(cast(Kind, kind), int(size), digest)

    def encoded_size(self) -> int:
        """About how many bytes the part's content takes in JSON (raw bytes are base64)."""
        return 4 * ((self.size + 2) // 3) if self.kind == "raw" else self.size


def blob_key(scope: Scope, task_id: str, digest: str) -> str:
    """The object key of a part of ``task_id`` in ``scope`` with this content digest: one prefix
    per task (the scope and id hashed, so no caller-chosen text reaches a key)."""
    name = "\x00".join((scope.tenant, scope.owner, task_id)).encode("utf-8", "surrogatepass")
    return f"tasks/{hashlib.sha256(name).hexdigest()}/{digest}"


def _content(part: Part) -> tuple[Kind, bytes] | None:
    if part.text is not None:
        return "text", part.text.encode("utf-8", "surrogatepass")
    if part.raw is not None:
        return "raw", bytes(part.raw)
    if part.url is None and part.data is not None:
        return "data", json.dumps(part.data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return None


# ------------------------------------------------------------------------------ walking parts

PartsFn = Callable[[list[Part]], list[Part]]


def map_parts(obj: T, fn: PartsFn) -> T:
    """``obj`` (a Task, Message, StreamResponse, SendMessageResponse or one of their pieces) with
    ``fn`` applied to the parts of each message and artifact in it. Unchanged pieces are the same
    objects, so a task without references is returned as it is."""
    return cast(T, _map(obj, fn))


def _map(obj: Any, fn: PartsFn) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Message | Artifact):
        parts = fn(obj.parts)
        return obj if parts is obj.parts else obj.model_copy(update={"parts": parts})
    if isinstance(obj, TaskStatus):
        return _update(obj, message=_map(obj.message, fn))
    if isinstance(obj, Task):
        return _update(
            obj,
            status=_map(obj.status, fn),
            artifacts=_map_list(obj.artifacts, fn),
            history=_map_list(obj.history, fn),
        )
    if isinstance(obj, TaskStatusUpdateEvent):
        return _update(obj, status=_map(obj.status, fn))
    if isinstance(obj, TaskArtifactUpdateEvent):
        return _update(obj, artifact=_map(obj.artifact, fn))
    if isinstance(obj, StreamResponse):
        return _update(
            obj,
            task=_map(obj.task, fn),
            message=_map(obj.message, fn),
            status_update=_map(obj.status_update, fn),
            artifact_update=_map(obj.artifact_update, fn),
        )
    if isinstance(obj, SendMessageResponse):
        return _update(obj, task=_map(obj.task, fn), message=_map(obj.message, fn))
    raise TypeError(f"no parts to map in {type(obj).__name__}")


def _map_list(items: list[Any], fn: PartsFn) -> list[Any]:
    mapped = [_map(item, fn) for item in items]
    return items if all(a is b for a, b in zip(mapped, items, strict=True)) else mapped


def _update(obj: Any, **fields: Any) -> Any:
    changed = {name: value for name, value in fields.items() if value is not getattr(obj, name)}
    return obj.model_copy(update=changed) if changed else obj


def _is_reference(part: Part) -> bool:
    return part.url is not None and part.url.startswith(REF_SCHEME)


def has_references(obj: Any) -> bool:
    """Whether ``obj`` (as for :func:`map_parts`) holds a reference to a stored part."""
    found = False

    def look(parts: list[Part]) -> list[Part]:
        nonlocal found
        found = found or any(map(_is_reference, parts))
        return parts

    map_parts(obj, look)
    return found


def check_no_references(message: Message, field: str = "message") -> None:
    """Refuse a client's message whose parts use the reserved ``a2a-blob:`` scheme."""
    bad = [i for i, part in enumerate(message.parts) if _is_reference(part)]
    if bad:
        raise InvalidParamsError(
            "the a2a-blob: URL scheme is reserved for parts the server stores",
            violations=[FieldViolation(f"{field}.parts[{i}].url", "a2a-blob: URLs are reserved") for i in bad],
        )


# ------------------------------------------------------------------------------ the way in


class PartOffloader:
    """Stores a task's large parts as objects before the task is written (see the module doc)."""

    def __init__(self, blobs: BlobStore, threshold: int, container_bytes: int = CONTAINER_BYTES) -> None:
        self.blobs = blobs
        self._threshold = threshold
        self._container_bytes = container_bytes
        self._lock = threading.Lock()
        self._recent: OrderedDict[str, None] = OrderedDict()
        """Keys this process stored lately: a part that every snapshot repeats is uploaded once."""

    def offload(self, record: TaskRecord, events: Sequence[StreamResponse]) -> tuple[TaskRecord, list[StreamResponse]]:
        """``record`` (its task) and ``events`` with their large parts stored and referenced.
        Raises :class:`~a2a_serverless.ports.BlobError` when a part cannot be stored: then the
        caller writes nothing (objects already stored are orphans the lifecycle removes)."""

        task = self.offload_one(record.task, record.scope, record.task_id)
        offloaded = [self.offload_one(event, record.scope, record.task_id) for event in events]
        return (record if task is record.task else replace(record, task=task)), offloaded

    def for_commit(
        self, record: TaskRecord, events: Sequence[StreamResponse]
    ) -> tuple[list[StreamResponse], Callable[[Task], Task]]:
        """``events`` of ``record``'s task with their large parts stored, and what stores the task's
        own, for a commit to call only when it writes the task's snapshot
        (:func:`a2a_serverless.ports.store.plan_commit`)."""
        stored = [self.offload_one(event, record.scope, record.task_id) for event in events]
        return stored, partial(self.offload_one, scope=record.scope, task_id=record.task_id)

    def offload_one(self, obj: T, scope: Scope, task_id: str) -> T:
        """``obj`` (as for :func:`map_parts`) of the task ``task_id`` with its large parts stored."""
        return map_parts(obj, partial(self._container, scope, task_id))

    def may_offload(self, event: StreamResponse) -> bool:
        """Whether ``event`` holds a part to store: a message or artifact whose parts' content
        reaches the threshold or the container bound (what :meth:`offload_one` would act on),
        measured without serializing the event (this runs for every event an executor emits)."""
        bound = min(self._threshold, self._container_bytes)
        found = False

        def look(parts: list[Part]) -> list[Part]:
            nonlocal found
            if not found:
                found = sum(len(c[1]) for c in map(_content, parts) if c is not None) >= bound
            return parts

        map_parts(event, look)
        return found

    def _container(self, scope: Scope, task_id: str, parts: list[Part]) -> list[Part]:
        contents = [_content(part) for part in parts]
        sizes = [len(c[1]) if c is not None else 0 for c in contents]
        chosen = {i for i, size in enumerate(sizes) if size >= self._threshold}
        kept = sum(size for i, size in enumerate(sizes) if i not in chosen)
        for i in sorted(range(len(parts)), key=lambda i: -sizes[i]):
            if kept <= self._container_bytes or sizes[i] == 0:
                break
            if i not in chosen:
                chosen.add(i)
                kept -= sizes[i]
        if not chosen:
            return parts
        out = list(parts)
        for i in chosen:
            kind, data = cast(tuple[Kind, bytes], contents[i])
            out[i] = self._store(scope, task_id, parts[i], kind, data)
        return out

    def _store(self, scope: Scope, task_id: str, part: Part, kind: Kind, data: bytes) -> Part:
        ref = PartRef(kind, len(data), hashlib.sha256(data).hexdigest())
        key = blob_key(scope, task_id, ref.digest)
        with self._lock:
            known = key in self._recent
            if known:
                self._recent.move_to_end(key)
        if not known:
            self.blobs.put(key, data, part.media_type or _DEFAULT_MEDIA_TYPE[kind])
            with self._lock:
                self._recent[key] = None
                while len(self._recent) > _RECENT_KEYS:
                    self._recent.popitem(last=False)
        return Part(url=ref.url, filename=part.filename, media_type=part.media_type, metadata=part.metadata)


# ------------------------------------------------------------------------------ the way out


class PartPresenter:
    """Turns references back into parts a client can use (see the module doc)."""

    def __init__(self, blobs: BlobStore | None, url_seconds: int) -> None:
        self.blobs = blobs
        self._url_seconds = url_seconds

    def present(self, obj: T, scope: Scope, task_id: str, budget: int | None) -> T:
        """``obj`` with each reference replaced: inline while ``budget`` bytes (None: no limit)
        last, else a presigned URL. Raises :class:`ContentUnavailableError` when a stored part
        cannot be read or signed."""
        return self.present_within(obj, scope, task_id, budget)[0]

    def present_within(self, obj: T, scope: Scope, task_id: str, budget: int | None) -> tuple[T, int]:
        """:meth:`present`, and how many bytes of the budget the parts sent inline took (for a
        budget shared by several objects: a page of tasks, a stream's events)."""
        if self.blobs is None:
            return obj, 0
        spent = [0]

        def show(parts: list[Part]) -> list[Part]:
            if not any(map(_is_reference, parts)):
                return parts
            return [self._show(scope, task_id, part, budget, spent) for part in parts]

        try:
            return map_parts(obj, show), spent[0]
        except BlobError as exc:
            logger.warning("a stored part could not be read", extra={"task_id": task_id, "reason": str(exc)})
            raise ContentUnavailableError() from exc

    def _show(self, scope: Scope, task_id: str, part: Part, budget: int | None, spent: list[int]) -> Part:
        ref = PartRef.of(part)
        if ref is None:
            return part
        blobs = self.blobs
        assert blobs is not None
        key = blob_key(scope, task_id, ref.digest)
        if budget is not None and spent[0] + ref.encoded_size() > budget:
            media_type = part.media_type or _DEFAULT_MEDIA_TYPE[ref.kind]
            url = blobs.url(key, filename=part.filename, media_type=media_type, expires_seconds=self._url_seconds)
            if url is not None:
                return Part(url=url, filename=part.filename, media_type=media_type, metadata=part.metadata)
        spent[0] += ref.encoded_size()
        data = blobs.get(key)
        if len(data) != ref.size or hashlib.sha256(data).hexdigest() != ref.digest:
            raise BlobError(f"stored part {key} does not hold what the task points at")
        common: Json = {"filename": part.filename, "media_type": part.media_type, "metadata": part.metadata}
        if ref.kind == "text":
            return Part(text=data.decode("utf-8", "surrogatepass"), **common)
        if ref.kind == "raw":
            return Part(raw=data, **common)
        return Part(data=json.loads(data), **common)
