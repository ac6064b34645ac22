"""The relay's view of a remote artifact (``delegation._common.Relay``): appended chunks are kept as
our task holds them (joined text, ``lifecycle.append_parts``), so a remote's Task snapshot with the
same content, whether that remote joins its appended text or keeps its chunks apart, relays nothing
again; a snapshot with other content replaces the artifact."""

from __future__ import annotations

import pytest

from a2a_serverless.delegation._common import Relay
from a2a_serverless.execution import Event, TaskUpdater
from a2a_serverless.models import (
    Artifact,
    Part,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
)


class Events:
    """The events the relay hands our run (an executor's event queue, kept in a list)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    async def enqueue_event(self, event: Event) -> None:
        self.events.append(event)


def chunk(text: str, append: bool) -> StreamResponse:
    artifact = Artifact(artifact_id="out", parts=[Part(text=text)])
    return StreamResponse(
        artifact_update=TaskArtifactUpdateEvent(task_id="rt", context_id="rc", artifact=artifact, append=append)
    )


def snapshot(*texts: str) -> StreamResponse:
    artifact = Artifact(artifact_id="out", parts=[Part(text=t) for t in texts])
    status = TaskStatus(state=TaskState.TASK_STATE_WORKING)
    return StreamResponse(task=Task(id="rt", context_id="rc", status=status, artifacts=[artifact]))


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "remote_parts",
    [
        pytest.param(("tick 0", "tick 1", "tick 2"), id="chunks-apart"),
        pytest.param(("tick 0tick 1tick 2",), id="joined"),
    ],
)
async def test_a_snapshot_with_the_streamed_content_relays_nothing_again(remote_parts: tuple[str, ...]) -> None:
    events = Events()
    relay = Relay(TaskUpdater(events, "ours", "ctx"), "r:", artifacts=True, status=False)
    for n in range(3):
        await relay.event(chunk(f"tick {n}", append=n > 0))
    assert len(events.events) == 3

    await relay.event(snapshot(*remote_parts))
    assert len(events.events) == 3

    # and a snapshot with more content replaces the artifact with it
    await relay.event(snapshot(*remote_parts, "tick 3"))
    assert len(events.events) == 4
    replaced = events.events[-1]
    assert isinstance(replaced, TaskArtifactUpdateEvent)
    assert not replaced.append
    assert [p.text for p in replaced.artifact.parts] == [*remote_parts, "tick 3"]
