"""``delegate`` canceled in the middle, as the worker does it: once when CancelTask reaches the run,
and again when it stops ``execute`` after the executor's ``cancel``, which may land while the
remote's CancelTask is still on its way. That request is finished first. A cancel that lands before
the remote's first event (its task made, its id not yet told) still cancels the remote task. And a
remote that never answers a call: its calls time out, and the delegation ends UNREACHABLE, naming it."""

from __future__ import annotations

import asyncio
import threading

import pytest
from delegation_servers import CARD, WAIT, Agent, our_agent
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.types import Message as AsgiMessage

from a2a_serverless.delegation import Outcome, RemoteAgent, delegate
from a2a_serverless.execution import Event, RequestContext, TaskUpdater
from a2a_serverless.models import Message, Part, Role, TaskStatusUpdateEvent
from testkit.served import served
from testkit.waiting import wait_until


class Events:
    """The events ``delegate`` relays (an executor's event queue, kept in a list)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    async def enqueue_event(self, event: Event) -> None:
        self.events.append(event)


def working(remote: Agent) -> str | None:
    tasks = [t["id"] for t in remote.tasks() if t["status"]["state"] == "TASK_STATE_WORKING"]
    return tasks[0] if tasks else None


@pytest.mark.asyncio
async def test_a_second_cancel_waits_for_the_remote_s_cancel() -> None:
    with our_agent("relay_agents:ChoreAgent", hold_cancels=True) as chores:
        assert chores.holds is not None
        message = Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text="go")])
        context = RequestContext(task_id="ours", context_id="ctx", message=message)
        events = Events()
        async with RemoteAgent(chores.card_url, binding="HTTP+JSON") as remote:
            # Given a delegation to a remote that works until it is canceled
            run = asyncio.ensure_future(delegate(context, TaskUpdater(events, "ours", "ctx"), remote, "hang"))
            remote_task = await asyncio.to_thread(wait_until, lambda: working(chores), "the remote to work", within=30)
            # (and its first event relayed: the remote task's id known, the cancel goes straight to CancelTask)
            await asyncio.to_thread(wait_until, lambda: events.events, "the remote's first event relayed", within=30)

            # When our run is canceled, and canceled again while the remote's CancelTask is in flight
            run.cancel()
            assert await asyncio.to_thread(chores.holds.arrived.wait, 30)
            run.cancel()
            chores.holds.release.set()
            with pytest.raises(asyncio.CancelledError):
                await run

            # Then the remote had answered its CancelTask by the time delegate gave up
            assert chores.holds.answered.is_set()
        chores.wait_for(remote_task, "TASK_STATE_CANCELED")
    # And until then its WORKING message was relayed as ours
    updates = [e for e in events.events if isinstance(e, TaskStatusUpdateEvent)]
    assert [u.status.message.parts[0].text for u in updates if u.status.message] == ["on it"]


class HoldFirstEvent:
    """Holds the first event of each stream (``/message:stream``) the app answers until the test
    ``release``s it, ``arrived`` once one is held: the remote task is made, its id not yet told."""

    def __init__(self) -> None:
        self.arrived, self.release = threading.Event(), threading.Event()

    def around(self, app: ASGIApp) -> ASGIApp:
        async def holding(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http" or not scope["path"].endswith("/message:stream"):
                await app(scope, receive, send)
                return
            held = False

            async def sending(message: AsgiMessage) -> None:
                nonlocal held
                if message["type"] == "http.response.body" and message.get("body") and not held:
                    held = True
                    self.arrived.set()
                    for _ in range(int(WAIT * 100)):  # a hang guard, not a delay
                        if self.release.is_set():
                            break
                        await asyncio.sleep(0.01)
                await send(message)

            await app(scope, receive, sending)

        return holding


@pytest.mark.asyncio
async def test_a_cancel_before_the_remote_s_first_event_still_cancels_its_task() -> None:
    holds = HoldFirstEvent()
    with our_agent("relay_agents:ChoreAgent", wrap=holds.around) as chores:
        message = Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text="go")])
        context = RequestContext(task_id="ours", context_id="ctx", message=message)
        events = Events()
        async with RemoteAgent(chores.card_url, binding="HTTP+JSON") as remote:
            # Given a delegation whose remote made its task and works, but whose stream has not
            # told us of it yet (its first event held)
            updater = TaskUpdater(events, "ours", "ctx")
            run = asyncio.ensure_future(delegate(context, updater, remote, "hang", cancel_timeout=WAIT))
            remote_task = await asyncio.to_thread(
                wait_until, lambda: working(chores), "the remote to work", within=WAIT
            )
            assert await asyncio.to_thread(holds.arrived.wait, WAIT)
            assert not events.events

            # When our run is canceled, and only then the remote's first event goes out
            run.cancel()
            holds.release.set()
            with pytest.raises(asyncio.CancelledError):
                await run

        # Then the remote task was canceled all the same
        chores.wait_for(remote_task, "TASK_STATE_CANCELED")
    # And nothing of it was relayed into our canceled task
    assert not events.events


def _silent_agent() -> Starlette:
    """An agent whose card is served but whose every call goes unanswered (for the hang guard's
    length), as a remote that hangs at the HTTP level."""

    async def card(request: Request) -> JSONResponse:
        base = str(request.base_url).rstrip("/")
        interfaces = [{"url": base + "/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]
        fields = {"name": "silent", "description": "never answers", "version": "1", "capabilities": {}}
        return JSONResponse({**fields, "supportedInterfaces": interfaces})

    async def never(request: Request) -> JSONResponse:
        await asyncio.sleep(WAIT)
        return JSONResponse({})

    return Starlette(routes=[Route(CARD, card), Route("/", never, methods=["POST"])])


@pytest.mark.asyncio
async def test_a_remote_that_never_answers_a_call_is_unreachable() -> None:
    with served(_silent_agent()) as url:
        message = Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text="go")])
        context = RequestContext(task_id="ours", context_id="ctx", message=message)
        async with RemoteAgent(url + CARD, timeout=0.2, attempts=2) as remote:
            result = await delegate(context, TaskUpdater(Events(), "ours", "ctx"), remote, "hello")
    assert result.outcome is Outcome.UNREACHABLE
    assert result.detail == "The remote agent 'silent' failed sending a message: it did not answer within 0.2 s."
