"""Our agent in multi-hop chains with the reference Python agent, a2a-sdk 1.x and 0.3, each direction,
over JSON-RPC and over HTTP+JSON (issue 33, "Interop kept").

The agents (``interop/chain_*.py``) forward the user's text along the chain its orders name and
answer with what came back, each hop adding its name (``interop/chain_common.py``):

* our agent calls the reference agent: a client (a2a-sdk 1.x) sends to our agent on the local stack
  (``interop/chain_agent.py``), which sends on to the reference agent, served by a2a-sdk 1.x in this
  process (``interop/chain_ref_v1.py``) or by a2a-sdk 0.3 in ``.venv-a2a03``
  (``interop/chain_ref_v03.py``, ``make a2a03``). To the 1.x agent through
  ``a2a_serverless.delegation``; to the 0.3 agent through the a2a-sdk 1.x client, since the
  delegation client speaks A2A 1.0 only (the last test shows what it says of a 0.3 agent). The
  binding is the one the reference agent's card prefers: each serves one card preferring each.
* the reference agent calls our agent: the a2a-sdk 1.x client sends to the reference agent, whose
  executor sends on to our agent with its own SDK's client, on the binding its orders name.

Each case runs over one binding from end to end, once with SendMessage and once streamed: the final
answer carries each hop's name, the task ends COMPLETED, the chunks of the answer arrive in order,
and the task on our stack is COMPLETED with the chunks relayed to it or made by it. Which binding
each hop took is read from what the reference agent served and sent.
"""

from __future__ import annotations

import os
import queue
import subprocess
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.types import GetTaskRequest, SendMessageRequest, StreamResponse, Task, TaskState
from e2e_stack import REPO, running_stack
from interop import chain_ref_v1

from testkit.sdk import sdk_session, send, user_message
from testkit.served import served

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
SERVER_V03 = HERE / "interop" / "chain_ref_v03.py"
PYTHON_V03 = Path(os.environ.get("A2A03_PYTHON") or REPO / ".venv-a2a03" / "bin" / "python")
CARD = "/.well-known/agent-card.json"
PREFERRING = {"JSONRPC": CARD, "HTTP+JSON": chain_ref_v1.REST_CARD}
"""The path of the reference agent's card that prefers each binding."""
NAMES = {"1.x": "a2a-sdk 1.x", "0.3": "a2a-sdk 0.3"}
OURS = "serverless"
CHUNKS = ["chunk 0", "chunk 1", "chunk 2"]
JOINED = ["".join(CHUNKS)]
"""The chunks as our tasks hold them: appended text joined into one part (the reference agents keep them apart)."""
WAIT = 60.0
"""Hang guard (seconds) for a server to start; never a measured expectation."""

GENERATIONS = [pytest.param("1.x", id="sdk-1.x"), pytest.param("0.3", id="sdk-0.3")]
BINDINGS = [pytest.param("JSONRPC", id="jsonrpc"), pytest.param("HTTP+JSON", id="http-json")]
MODES = [pytest.param(False, id="send"), pytest.param(True, id="stream")]


# -- the agents --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = {"A2A_EXECUTOR": "interop.chain_agent:ChainAgent", "PYTHONPATH": str(HERE)}
    with running_stack(tmp_path_factory.mktemp("chain-stack"), settings) as (base_url, _):
        yield base_url


@pytest.fixture(scope="module")
def reference_v1() -> Iterator[str]:
    recorder = chain_ref_v1.create_app()
    with served(recorder) as url:  # type: ignore[arg-type]
        chain_ref_v1.route(recorder, url)
        yield url


@pytest.fixture(scope="module")
def reference_v03(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not PYTHON_V03.exists():
        pytest.skip(f"{PYTHON_V03} is missing: `make a2a03` creates it (`make test` does too), or set A2A03_PYTHON")
    log = tmp_path_factory.mktemp("chain-v03") / "stderr.log"
    env = {**os.environ, "PYTHONPATH": str(HERE), "PYTHONUNBUFFERED": "1"}
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [str(PYTHON_V03), str(SERVER_V03)], env=env, stdout=subprocess.PIPE, stderr=stderr, text=True
        )
        try:
            lines: queue.Queue[str] = queue.Queue()
            threading.Thread(target=lambda: [lines.put(line) for line in process.stdout or ()], daemon=True).start()
            try:
                ready = lines.get(timeout=WAIT)
            except queue.Empty:
                ready = ""
            if not ready.startswith("ready "):
                why = f"did not start (`make a2a03` installs its server): {ready!r}"
                pytest.fail(f"the a2a-sdk 0.3 agent {why}\n{log.read_text()}")
            yield ready.split()[1]
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)


def reference(request: pytest.FixtureRequest, generation: str) -> str:
    """The base URL of the reference agent of ``generation`` (the 0.3 one skips without ``.venv-a2a03``)."""
    url: str = request.getfixturevalue("reference_v1" if generation == "1.x" else "reference_v03")
    return url


# -- reading the chain -------------------------------------------------------------------------------


@dataclass
class Answer:
    """What the client at the front of a chain got: the task, and the chunks its stream carried."""

    task: Task
    streamed: list[str]


async def ask(base_url: str, binding: str, text: str, *, streaming: bool) -> Answer:
    """``text`` sent to the agent at ``base_url`` by the a2a-sdk 1.x client on ``binding``."""
    async with sdk_session(base_url, binding, streaming=streaming) as session:
        request = SendMessageRequest(message=user_message(text))
        if not streaming:
            return Answer(await send(session.client, request), [])
        events: list[StreamResponse] = [e async for e in session.client.send_message(request)]
        assert events, "the stream carried no event"
        last = events[-1]
        assert last.HasField("status_update"), last
        assert last.status_update.status.state == TaskState.TASK_STATE_COMPLETED, last
        streamed = [p.text for e in events if e.HasField("artifact_update") for p in e.artifact_update.artifact.parts]
        task = await session.client.get_task(GetTaskRequest(id=last.status_update.task_id))
        return Answer(task, streamed)


def said(task: Task) -> str:
    return "".join(p.text for p in task.status.message.parts)


def chunks_of(task: Task) -> list[str]:
    return [p.text for a in task.artifacts for p in a.parts]


def requests_of(base_url: str) -> dict[str, list[list[str]]]:
    """What the reference agent served and sent so far (``chain_common.Recorder``)."""
    log: dict[str, list[list[str]]] = httpx.get(base_url + "/_requests", timeout=30).json()
    return log


def check_binding(calls: list[list[str]], binding: str) -> None:
    """``calls`` (method, path, JSON-RPC method), the cards aside, were all on ``binding``, a stream among them."""
    calls = [c for c in calls if not c[1].endswith(CARD)]
    assert calls, "no call"
    if binding == "JSONRPC":
        assert all(c[:2] == ["POST", "/"] for c in calls), calls
        assert {"SendStreamingMessage", "message/stream"} & {c[2] for c in calls}, calls
    else:
        assert all(c[1] != "/" for c in calls), calls
        streams = (["POST", "/message:stream"], ["POST", "/v1/message:stream"])  # A2A 1.0, 0.3
        assert any(c[:2] in streams for c in calls), calls


def call_stack(stack: str, method: str, params: dict[str, Any]) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    answer = httpx.post(stack + "/", json=body, headers={"A2A-Version": "1.0"}, timeout=30).json()
    assert "result" in answer, answer
    return answer["result"]


def check_our_task(task: dict[str, Any], says: str) -> None:
    """A task of our stack, as its JSON-RPC API shows it: COMPLETED, saying ``says``, with the chunks joined."""
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task["status"]
    assert [p["text"] for p in task["status"]["message"]["parts"]] == [says]
    [artifact] = task["artifacts"]
    assert [p["text"] for p in artifact["parts"]] == JOINED
    assert artifact["artifactId"].endswith("answer"), artifact["artifactId"]


# -- the chains ------------------------------------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize("streaming", MODES)
@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("generation", GENERATIONS)
async def test_our_agent_calls_the_reference_agent(
    stack: str, request: pytest.FixtureRequest, generation: str, binding: str, streaming: bool
) -> None:
    ref = reference(request, generation)
    before = len(requests_of(ref)["served"])
    # Given orders for our agent: send "count 3 ..." on to the reference agent, by the card preferring the binding
    payload = f"count 3 {uuid.uuid4().hex[:8]}"
    verb = "delegate" if generation == "1.x" else "call"
    orders = f"{verb} {ref}{PREFERRING[binding]} - {payload}"

    # When the client sends them to our agent
    answer = await ask(stack, binding, orders, streaming=streaming)

    # Then the answer names both hops, ours first, and the task completed with the reference agent's chunks
    expected = f"{OURS} > {NAMES[generation]}: {payload}"
    assert answer.task.status.state == TaskState.TASK_STATE_COMPLETED, answer.task.status
    assert said(answer.task) == expected
    assert chunks_of(answer.task) == JOINED
    if streaming:  # chunk by chunk, in order, through both hops
        assert answer.streamed == CHUNKS
    # and our agent reached the reference agent on the binding its card prefers, streaming
    check_binding(requests_of(ref)["served"][before:], binding)
    # and our stack holds the task COMPLETED with the relayed chunks
    check_our_task(call_stack(stack, "GetTask", {"id": answer.task.id}), expected)


@pytest.mark.asyncio
@pytest.mark.parametrize("streaming", MODES)
@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("generation", GENERATIONS)
async def test_the_reference_agent_calls_our_agent(
    stack: str, request: pytest.FixtureRequest, generation: str, binding: str, streaming: bool
) -> None:
    ref = reference(request, generation)
    before = len(requests_of(ref)["sent"])
    # Given orders for the reference agent: send "count 3 ..." on to our agent, on the binding
    payload = f"count 3 {uuid.uuid4().hex[:8]}"
    orders = f"call {stack}{CARD} {binding} {payload}"

    # When the client sends them to the reference agent
    answer = await ask(ref, binding, orders, streaming=streaming)

    # Then the answer names both hops, the reference agent first, and the task completed with our chunks
    assert answer.task.status.state == TaskState.TASK_STATE_COMPLETED, answer.task.status
    assert said(answer.task) == f"{NAMES[generation]} > {OURS}: {payload}"
    assert chunks_of(answer.task) == CHUNKS
    if streaming:
        assert answer.streamed == CHUNKS
    # and the reference agent's client reached our agent on the binding, streaming
    check_binding(requests_of(ref)["sent"][before:], binding)
    # and our stack holds its task COMPLETED with the chunks it made
    tasks = call_stack(stack, "ListTasks", {"includeArtifacts": True, "pageSize": 100})["tasks"]
    ours = [t for t in tasks if t["status"].get("message", {}).get("parts") == [{"text": f"{OURS}: {payload}"}]]
    assert len(ours) == 1, [t["status"] for t in tasks]
    check_our_task(ours[0], f"{OURS}: {payload}")


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_chain_through_both_reference_agents_and_ours(
    stack: str, request: pytest.FixtureRequest, binding: str
) -> None:
    v03, v1 = reference(request, "0.3"), reference(request, "1.x")
    before = len(requests_of(v1)["served"])
    # Given orders for the a2a-sdk 0.3 agent: ask our agent to delegate "count 3 ..." to the a2a-sdk 1.x agent
    payload = f"count 3 {uuid.uuid4().hex[:8]}"
    orders = f"call {stack}{CARD} {binding} delegate {v1}{PREFERRING[binding]} - {payload}"

    # When the client streams them to the 0.3 agent
    answer = await ask(v03, binding, orders, streaming=True)

    # Then the 1.x agent's chunks came back through three hops, in order, and the answer names each hop
    assert said(answer.task) == f"{NAMES['0.3']} > {OURS} > {NAMES['1.x']}: {payload}"
    assert answer.streamed == CHUNKS
    assert chunks_of(answer.task) == CHUNKS
    check_binding(requests_of(v1)["served"][before:], binding)


def test_the_delegation_client_does_not_call_an_a2a_0_3_agent(stack: str, request: pytest.FixtureRequest) -> None:
    # Given orders for our agent to delegate to the a2a-sdk 0.3 agent, whose card offers A2A 0.3 only
    ref = reference(request, "0.3")
    before = len(requests_of(ref)["served"])
    card = ref + CARD
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": f"delegate {card} - hi"}]}

    # When a client sends them
    task = call_stack(stack, "SendMessage", {"message": message})["task"]

    # Then our task fails, saying which agent it could not call and why, having only read its card
    assert task["status"]["state"] == "TASK_STATE_FAILED", task["status"]
    [part] = task["status"]["message"]["parts"]
    assert "'reference chain agent (a2a-sdk 0.3)' cannot be called" in part["text"], part
    assert "no A2A 1.x interface" in part["text"], part
    assert requests_of(ref)["served"][before:] == [["GET", CARD, ""]]
