"""What a call needs: the settings, the store, the queue, the executor and the push and card signers
of this process, as one value passed to every operation.

This module only describes the runtime; :mod:`.wiring` builds it from the settings (choosing the
adapters) and keeps the process's one. The executor and the push signer are made on first use,
by factories the wiring supplies, because only the worker needs the one and only push delivery
the other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .blobs import PartOffloader, PartPresenter
from .config import Settings
from .ports import TaskStore, WorkQueue
from .ports.agent_state import AgentStateStore
from .ports.durable import DurableRuns

if TYPE_CHECKING:
    from .card.signing import CardSigner
    from .execution.api import AgentExecutor
    from .push.signing import NotificationSigner

__all__ = ["Runtime"]


@dataclass
class Runtime:
    settings: Settings
    store: TaskStore
    queue: WorkQueue
    parts: PartPresenter = field(default_factory=lambda: PartPresenter(None, 900))
    """Turns the store's references to large parts back into parts for a client (:mod:`.blobs`)."""
    offloader: PartOffloader | None = None
    """Stores large parts as objects (the store it was given to does so on every write; a run's
    event queue does so as events arrive)."""
    durable: DurableRuns | None = None
    """Durable mode: the executions of tasks (CancelTask wakes one waiting for input to end it)."""
    agent_state: AgentStateStore | None = None
    """What agents keep between runs (``context.state``; :mod:`.execution.agent_state`)."""
    make_executor: Callable[[], AgentExecutor] | None = field(default=None, repr=False)
    """Creates the configured executor (``wiring.load_executor``), called once, on first use."""
    make_push_signer: Callable[[], NotificationSigner | None] | None = field(default=None, repr=False)
    """Creates the notification signer (None: notifications are not signed), once, on first use."""
    make_card_signer: Callable[[], CardSigner | None] | None = field(default=None, repr=False)
    """Creates the agent card signer (None: cards are not signed), once, on first use."""
    _executor: AgentExecutor | None = field(default=None, repr=False)
    _push_signer: NotificationSigner | None = field(default=None, repr=False)
    _card_signer: CardSigner | None = field(default=None, repr=False)

    @property
    def executor(self) -> AgentExecutor:
        """The configured executor, made on first use (only the worker needs it)."""
        if self._executor is None:
            if self.make_executor is None:
                raise RuntimeError("this runtime has no executor")
            self._executor = self.make_executor()
        return self._executor

    @property
    def push_signer(self) -> NotificationSigner | None:
        """The notification signer when ``push_signing`` is on (keys in SSM, loaded on first use)."""
        if not self.settings.push_signing:
            return None
        if self._push_signer is None and self.make_push_signer is not None:
            self._push_signer = self.make_push_signer()
        return self._push_signer

    @property
    def card_signer(self) -> CardSigner | None:
        """The agent card signer when a card signing key is configured (made on first use)."""
        if not self.settings.signs_cards:
            return None
        if self._card_signer is None and self.make_card_signer is not None:
            self._card_signer = self.make_card_signer()
        return self._card_signer
