"""The delivery side of the ``TaskStore`` port: how far each push config's deliveries got.

Each config carries two marks that only ever move up, and never for a deleted config:

* the **delivery cursor** (``delivered_seq``): the task's events up to it were delivered to the
  config's webhook, or handed to the dead-letter queue; the next delivery starts after it
  (:mod:`a2a_serverless.push.delivery` moves it);
* the **tried mark** (``tried_seq``): the event the latest failed attempt failed on. While it is
  past the cursor, that event and every later one (deliveries to a config are in order) wait
  for the retry.

Together they tell a blocking SendMessage when the push of the state it answers with was delivered
or tried (:mod:`a2a_serverless.operations._push_wait`). ``TaskStore`` includes this protocol.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..models import TaskPushNotificationConfig
from ..versions import CURRENT, ProtocolVersion
from .scope import Scope

__all__ = ["PushMarks", "PushProgress", "PushTarget"]


@dataclass(frozen=True, slots=True)
class PushTarget:
    """A push config with its marks: the events of the task up to ``delivered_seq`` were delivered
    to it (or handed to the dead-letter queue); the next delivery starts after it."""

    config: TaskPushNotificationConfig
    delivered_seq: int
    protocol_version: ProtocolVersion = CURRENT
    """The A2A version of the request that created the config: notifications take its shape."""
    tried_seq: int = 0
    """The event the latest failed delivery attempt failed on (0: none)."""


@dataclass(frozen=True, slots=True)
class PushProgress:
    """A config's two marks, without the config."""

    delivered_seq: int
    tried_seq: int = 0

    @property
    def held_back(self) -> bool:
        """A failed attempt holds the config's undelivered events back for a retry."""
        return self.tried_seq > self.delivered_seq

    def tried(self, seq: int) -> bool:
        """Event ``seq`` was delivered or dead-lettered, or was tried: it, or an event it waits
        behind, failed an attempt and waits for the retry."""
        return self.delivered_seq >= seq or self.held_back


class PushMarks(Protocol):
    def get_push_target(self, scope: Scope, task_id: str, config_id: str) -> PushTarget | None:
        """The config and its marks (strongly consistent), or None once deleted."""
        ...

    def advance_push_cursor(self, scope: Scope, task_id: str, config_id: str, seq: int) -> bool:
        """Move the config's cursor up to ``seq``; never down, and never for a deleted config.
        Returns whether it moved."""
        ...

    def mark_push_tried(self, scope: Scope, task_id: str, config_id: str, seq: int) -> bool:
        """Move the config's tried mark up to ``seq`` (an attempt to deliver event ``seq`` failed, a
        retry will follow); never down, and never for a deleted config. Returns whether it moved."""
        ...

    def push_progress(self, scope: Scope, task_id: str) -> dict[str, PushProgress]:
        """Config id -> its marks, for every config of the task: strongly consistent, and a small
        read (ids and marks only)."""
        ...
