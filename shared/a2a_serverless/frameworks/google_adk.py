"""Google ADK agents behind A2A: ``executor = adk_executor(agent)``
(``pip install 'a2a-serverless[google-adk]'``; ``docs/frameworks.md``).

The run is :meth:`google.adk.runners.Runner.run_async` with ``RunConfig(streaming_mode=StreamingMode.SSE)``,
ADK's public event stream, on an ``App`` made resumable (``ResumabilityConfig(is_resumable=True)``), so
that a pause is a paused invocation that ADK itself resumes:

* the text of partial events -> the answer's chunks (the text of a final event only when nothing
  of it was streamed: a model that does not stream); thoughts are not the answer and are left out;
* the function calls and responses of final events -> tool statuses;
* an invocation that ends with an open interrupt (a function call named in
  ``Event.long_running_tool_ids`` that nothing answered: a ``LongRunningFunctionTool`` that
  returned None, a tool confirmation (``FunctionTool(..., require_confirmation=True)`` or
  ``tool_context.request_confirmation()``), a workflow's ``RequestInput``) -> INPUT_REQUIRED with
  its question. The invocation id and the open calls are the paused state; the next message on
  the task answers each call with a ``FunctionResponse`` (a confirmation:
  ``{"confirmed": approves(reply)}``, with the reply's data part as its ``payload``; any other
  call: the reply's data part, or ``{"result": reply}``), and ``run_async(invocation_id=...)``
  resumes that invocation where it paused;
* non-text parts of the model's answer (inline data, file URIs), files a tool saves as ADK
  artifacts, and a workflow node's data ``output`` -> artifacts of their own;
* memory: the context's ADK ``Session`` (its events and state), kept as
  ``Session.model_dump_json(exclude_none=True)`` (a third of the size with the unset fields) and
  loaded for each run into a session service that holds that one session (:class:`_ContextSession`);
* an error event (``error_code``/``error_message``, say a blocked answer) -> FAILED, as an
  exception from the model or a tool is.
"""

from __future__ import annotations

import functools
import json
import uuid
import warnings
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

from ..json_types import Json, JsonValue
from ..models import Message
from ..models import Part as A2APart
from ._bridge import FrameworkExecutor, Turn
from ._events import FrameworkEvent, Output, Pause, TextDelta, ToolCall, ToolResult, approves

INSTALL_HINT = (
    "a2a_serverless.frameworks.google_adk runs Google ADK agents, and google-adk is not installed: "
    "pip install 'a2a-serverless[google-adk]'"
)

try:
    from google.adk.agents import RunConfig
    from google.adk.agents.run_config import StreamingMode  # type: ignore[attr-defined]  # ADK's documented path
    from google.adk.apps import App, ResumabilityConfig
    from google.adk.artifacts import InMemoryArtifactService
    from google.adk.events import Event
    from google.adk.runners import Runner
    from google.adk.sessions import BaseSessionService, Session
    from google.adk.sessions.base_session_service import GetSessionConfig, ListSessionsResponse
    from google.adk.workflow import BaseNode
    from google.genai import types
    from pydantic_core import to_jsonable_python
except ImportError as exc:
    raise ImportError(INSTALL_HINT) from exc

__all__ = ["INSTALL_HINT", "AdkError", "AdkExecutor", "adk_executor"]

AgentSource = BaseNode | App | Callable[[], BaseNode | App]
"""An agent (any ``google.adk`` agent, or a ``Workflow``), an ``App``, or a function making one."""

CONFIRMATION = "adk_request_confirmation"
CREDENTIAL = "adk_request_credential"
REQUEST_INPUT = "adk_request_input"
_SYNTHETIC = frozenset({CONFIRMATION, CREDENTIAL, REQUEST_INPUT})
"""The calls ADK makes itself to ask for something: an interrupt, not a tool the agent runs."""
_DEFAULT_HINT = "Please approve or reject the tool call"
"""How ADK's own confirmation hint starts (``require_confirmation=True``): written for its web UI,
replaced by a question a person can answer."""


class AdkError(RuntimeError):
    """ADK reported an error event (``error_code``/``error_message``): the run fails."""


class _ContextSession(BaseSessionService):
    """The session service of one run: it holds the one session of the run's context, loaded from
    the memory the bridge keeps for the context and kept again when the run ends or pauses.

    ADK's ``InMemorySessionService`` would do only by replaying every stored event through
    ``append_event`` on each run; holding the one session is what a service per run needs.
    ``RunConfig.get_session_config`` is not applied: the whole session is already in memory."""

    def __init__(self, session: Session) -> None:
        self.session = session

    async def create_session(
        self, *, app_name: str, user_id: str, state: dict[str, Any] | None = None, session_id: str | None = None
    ) -> Session:
        self.session = Session(
            id=session_id or str(uuid.uuid4()), app_name=app_name, user_id=user_id, state=dict(state or {})
        )
        return self.session

    async def get_session(
        self, *, app_name: str, user_id: str, session_id: str, config: GetSessionConfig | None = None
    ) -> Session | None:
        held = self.session
        return held if (held.app_name, held.user_id, held.id) == (app_name, user_id, session_id) else None

    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        held = self.session
        if held.app_name != app_name or user_id not in (None, held.user_id):
            return ListSessionsResponse()
        return ListSessionsResponse(sessions=[held.model_copy(update={"events": []})])

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        if await self.get_session(app_name=app_name, user_id=user_id, session_id=session_id) is not None:
            self.session = Session(id=session_id, app_name=app_name, user_id=user_id)


@dataclass
class _Interrupts:
    """The interrupts of a run: calls named in ``long_running_tool_ids``, open until a response
    with their id is seen. Paused, they are kept with the invocation's id and its events: the
    context's memory holds those events too, unless another turn of the context kept its memory
    first (the bridge then drops this turn's), and the reply puts them back (:func:`_rejoin`)."""

    invocation_id: str = ""
    open: dict[str, types.FunctionCall] = field(default_factory=dict)

    def see(self, event: Event) -> None:
        for call in event.get_function_calls():
            if call.id and call.id in (event.long_running_tool_ids or ()):
                self.open[call.id] = call
                self.invocation_id = event.invocation_id
        for response in event.get_function_responses():
            self.open.pop(response.id or "", None)

    def dump(self, session: Session) -> bytes:
        calls = [call.model_dump(mode="json", exclude_none=True) for call in self.open.values()]
        events = [
            e.model_dump(mode="json", exclude_none=True)
            for e in session.events
            if e.invocation_id == self.invocation_id
        ]
        return json.dumps({"invocation": self.invocation_id, "calls": calls, "events": events}).encode()

    @staticmethod
    def load(data: bytes) -> tuple[str, list[types.FunctionCall], list[Event]]:
        saved = json.loads(data)
        calls = [types.FunctionCall.model_validate(c) for c in saved["calls"]]
        return saved["invocation"], calls, [Event.model_validate(e) for e in saved["events"]]


class AdkExecutor(FrameworkExecutor):
    """Runs a Google ADK agent for each message (see the module's docstring)."""

    framework = "google-adk"

    def __init__(
        self,
        agent: AgentSource,
        *,
        app_name: str = "agent",
        approves: Callable[[str], bool] = approves,
        run_config: RunConfig | None = None,
        tool_details: bool = False,
    ) -> None:
        super().__init__(tool_details=tool_details)
        self._source = agent
        self._per_run = not isinstance(agent, BaseNode | App)
        self.app_name = app_name
        self.approves = approves
        base = run_config or RunConfig()
        self.run_config = base.model_copy(update={"streaming_mode": StreamingMode.SSE})

    def app(self) -> App:
        """The app of one run: the agent (a factory is called for each run), made resumable."""
        made = self._source() if callable(self._source) and self._per_run else self._source
        if isinstance(made, BaseNode):
            return App(name=self.app_name, root_agent=made, resumability_config=_resumable())
        if isinstance(made, App):
            return made.model_copy(update={"resumability_config": _resumable()})
        raise TypeError(f"the agent factory returned {type(made).__name__}, not a google.adk agent or App")

    async def run(self, turn: Turn) -> AsyncGenerator[FrameworkEvent, None]:
        app = self.app()
        user_id = turn.context.caller or "anonymous"
        session_id = turn.context.context_id
        sessions = _ContextSession(_session(turn.memory, app.name, user_id, session_id))
        artifacts = InMemoryArtifactService()
        runner = Runner(app=app, session_service=sessions, artifact_service=artifacts)
        invocation_id, message = None, _content(turn.message, turn.text)
        if turn.resume is not None:
            invocation_id, calls, paused = _Interrupts.load(turn.resume)
            _rejoin(sessions.session, invocation_id, paused)
            message = self._answer(calls, turn)
        interrupts, streamed = _Interrupts(), False
        try:
            stream = runner.run_async(
                user_id=user_id,
                session_id=session_id,
                invocation_id=invocation_id,
                new_message=message,
                run_config=self.run_config,
            )
            async with aclosing(stream) as events:
                async for event in events:
                    if event.error_code or event.error_message:
                        raise AdkError(f"ADK error event {event.error_code}: {event.error_message}")
                    if event.partial:
                        for text in _texts(event):
                            streamed = True
                            yield TextDelta(text)
                        continue
                    if not streamed:
                        for text in _texts(event):
                            yield TextDelta(text)
                    streamed = False
                    interrupts.see(event)
                    for framework_event in _tools(event):
                        yield framework_event
                    if outputs := await _outputs(event, artifacts, app.name, user_id, session_id):
                        yield Output(outputs)
        finally:
            if self._per_run:
                await runner.close()  # a factory's agent is this run's: its toolsets close with it
        turn.keep(sessions.session.model_dump_json(exclude_none=True).encode())
        if interrupts.open:
            yield _pause(interrupts, sessions.session, arguments=self.tool_details)

    def _answer(self, calls: list[types.FunctionCall], turn: Turn) -> types.Content:
        """The reply to a pause, as the function responses of the calls it answers."""
        data = _data_of(turn.message)
        responses = []
        for call in calls:
            response: dict[str, Any]
            if call.name == CONFIRMATION:
                response = {"confirmed": self.approves(turn.text)}
                if data is not None:
                    response["payload"] = data
            else:
                response = data if isinstance(data, dict) else {"result": turn.text if data is None else data}
            responses.append(
                types.Part(function_response=types.FunctionResponse(id=call.id, name=call.name, response=response))
            )
        return types.Content(role="user", parts=responses)


def adk_executor(
    agent: AgentSource,
    *,
    app_name: str = "agent",
    approves: Callable[[str], bool] = approves,
    run_config: RunConfig | None = None,
    tool_details: bool = False,
) -> AdkExecutor:
    """An executor running ``agent``: a ``google.adk`` agent or ``App``, or a function making one,
    called for each run (an agent holds no conversation state, so one object serves every run; a
    factory suits agents whose toolsets hold connections: they are closed when the run ends).
    ``app_name`` names the app when ``agent`` is not an ``App``; ``approves`` decides whether a
    reply approves a tool confirmation (yes, ok, approve...); ``run_config`` is the runs' ADK
    ``RunConfig`` (always streaming, SSE); ``tool_details`` puts tool arguments and results in the
    task (off: they can hold secrets)."""
    return AdkExecutor(agent, app_name=app_name, approves=approves, run_config=run_config, tool_details=tool_details)


@functools.cache
def _resumable() -> ResumabilityConfig:
    with warnings.catch_warnings():
        # ADK marks resumability experimental and warns once; the adapter relies on it knowingly.
        warnings.simplefilter("ignore", UserWarning)
        return ResumabilityConfig(is_resumable=True)


def _session(memory: bytes | None, app_name: str, user_id: str, session_id: str) -> Session:
    """The context's session as last kept, under this run's names; a new one in a new context."""
    if memory is None:
        return Session(id=session_id, app_name=app_name, user_id=user_id)
    return Session.model_validate_json(memory).model_copy(
        update={"id": session_id, "app_name": app_name, "user_id": user_id}
    )


def _rejoin(session: Session, invocation_id: str, events: list[Event]) -> None:
    """The paused invocation's events back in the session, when the context's memory lacks them."""
    if any(event.invocation_id == invocation_id for event in session.events):
        return
    for event in events:
        session.state.update(event.actions.state_delta)
        session.events.append(event)


def _content(message: Message | None, text: str) -> types.Content:
    """The user's message as ADK content: text, files (bytes or URLs) and data (as JSON text)."""
    parts = [_part(p) for p in message.parts] if message is not None else []
    return types.Content(role="user", parts=parts or [types.Part(text=text)])


def _part(part: A2APart) -> types.Part:
    if part.raw is not None:
        blob = types.Blob(data=bytes(part.raw), mime_type=part.media_type or "application/octet-stream")
        if part.filename:
            blob.display_name = part.filename
        return types.Part(inline_data=blob)
    if part.url is not None:
        return types.Part(file_data=types.FileData(file_uri=part.url, mime_type=part.media_type or None))
    if part.text is not None:
        return types.Part(text=part.text)
    return types.Part(text=json.dumps(part.data))


def _data_of(message: Message | None) -> JsonValue:
    """The first data part of a message, if it has one."""
    return next((p.data for p in message.parts if p.data is not None), None) if message is not None else None


def _texts(event: Event) -> list[str]:
    parts = event.content.parts if event.content and event.content.parts else []
    return [p.text for p in parts if p.text and not p.thought]


def _tools(event: Event) -> list[FrameworkEvent]:
    found: list[FrameworkEvent] = []
    for call in event.get_function_calls():
        if call.name and call.name not in _SYNTHETIC:
            found.append(ToolCall(call.name, call.id or "", to_jsonable_python(call.args)))
    asked = event.actions.requested_tool_confirmations
    for response in event.get_function_responses():
        if response.name and response.name not in _SYNTHETIC and response.id not in asked:
            found.append(ToolResult(response.name, response.id or "", to_jsonable_python(response.response)))
    return found


async def _outputs(
    event: Event, artifacts: InMemoryArtifactService, app_name: str, user_id: str, session_id: str
) -> list[A2APart]:
    """What the event gives that is not text: the model's files, saved artifacts, a node's output."""
    parts = event.content.parts if event.content and event.content.parts else []
    found = [a2a for p in parts if (a2a := _file(p)) is not None]
    for filename, version in event.actions.artifact_delta.items():
        saved = await artifacts.load_artifact(
            app_name=app_name, user_id=user_id, session_id=session_id, filename=filename, version=version
        )
        if saved is not None and (a2a := _file(saved, filename)) is not None:
            found.append(a2a)
    if event.output is not None and event.content is None:
        found.append(A2APart(data=to_jsonable_python(event.output)))
    return found


def _file(part: types.Part, filename: str = "") -> A2APart | None:
    if part.inline_data is not None and part.inline_data.data is not None:
        blob = part.inline_data
        name = filename or blob.display_name or ""
        return A2APart(raw=blob.data, media_type=blob.mime_type or "", filename=name)
    if part.file_data is not None and part.file_data.file_uri:
        file = part.file_data
        return A2APart(url=file.file_uri, media_type=file.mime_type or "", filename=filename or file.display_name or "")
    if part.text is not None and filename:
        return A2APart(text=part.text, filename=filename)
    return None


def _pause(interrupts: _Interrupts, session: Session, *, arguments: bool) -> Pause:
    calls = list(interrupts.open.values())
    if any(call.name == CREDENTIAL for call in calls):
        # A2A's AUTH_REQUIRED and OAuth flows are not what a reply in the task can answer.
        raise AdkError("the agent asked for a credential (adk_request_credential): not supported")
    tools = [_asked(call, arguments=arguments) for call in calls]
    return Pause(_question(calls[0]), state=interrupts.dump(session), data={"tools": to_jsonable_python(tools)})


def _asked(call: types.FunctionCall, *, arguments: bool) -> Json:
    """The call waiting for the person (for a confirmation, the call it holds back); its arguments
    only when tool details are opted in."""
    args = call.args or {}
    if call.name == CONFIRMATION and isinstance(held := args.get("originalFunctionCall"), dict):
        name, call_id, args = held.get("name"), held.get("id"), held.get("args") or {}
    else:
        name, call_id = call.name, call.id
    asked: Json = {"tool": name, "toolCallId": call_id}
    if arguments:
        asked["arguments"] = args
    return asked


def _question(call: types.FunctionCall) -> str:
    args = call.args or {}
    if call.name == CONFIRMATION:
        held = args.get("originalFunctionCall")
        tool = held.get("name") if isinstance(held, dict) else None
        confirmation = args.get("toolConfirmation")
        hint = confirmation.get("hint") if isinstance(confirmation, dict) else None
        asked = hint if isinstance(hint, str) and hint and not hint.startswith(_DEFAULT_HINT) else None
        return f"{asked or f'Approve calling tool {tool}?'} Reply yes to approve, anything else to reject."
    for key in ("message", "question"):
        if isinstance(asked := args.get(key), str) and asked:
            return asked
    return f"The tool {call.name} is waiting for your answer."
