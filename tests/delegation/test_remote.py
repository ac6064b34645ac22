"""``RemoteAgent`` against real HTTP servers: the card's binding, retries that never make a second
remote task, the SSRF guard, and credentials sent only as configured."""

from __future__ import annotations

import uuid

import pytest
from delegation_servers import Agent, our_agent

from a2a_serverless.delegation import RemoteAgent, RemoteAgentError, bearer
from a2a_serverless.delegation._wire import choose_endpoint
from a2a_serverless.models import AgentCard, Message, Part, Role, TaskState

BINDINGS = [pytest.param("JSONRPC", id="jsonrpc"), pytest.param("HTTP+JSON", id="http-json")]


def message(text: str) -> Message:
    return Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)])


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("streaming", [pytest.param(True, id="stream"), pytest.param(False, id="send")])
async def test_a_send_whose_answer_is_lost_is_retried_without_a_second_task(binding: str, streaming: bool) -> None:
    # Given a remote that does the work of the first send but answers it 503, as if the reply were lost
    with our_agent("relay_agents:ChoreAgent", fail_once=True, streaming=streaming) as flaky:
        async with RemoteAgent(flaky.card_url, binding=binding) as remote:  # type: ignore[arg-type]
            key = remote.call_key("our-task/our-message")
            # When we send a message through it
            events = [event async for event in remote.stream(message("chunks 2"), idempotency_key=key)]
        tasks = flaky.tasks()

    # Then the send was retried (the same Idempotency-Key both times) and answered
    assert flaky.faults is not None
    assert flaky.faults.failed == 1
    sends = [h["idempotency-key"] for _, _, h in flaky.requests if "idempotency-key" in h]
    assert sends == [key, key]
    states = [
        e.task.status.state if e.task else e.status_update.status.state for e in events if e.task or e.status_update
    ]
    assert states[-1] is TaskState.TASK_STATE_COMPLETED
    # And the remote made one task, not two
    assert len(tasks) == 1


@pytest.mark.asyncio
async def test_the_card_s_preferred_binding_is_used_unless_told_otherwise(chores: Agent) -> None:
    async with RemoteAgent(chores.card_url) as remote:
        task = await remote.send(message("chunks 1"))
        card = await remote.card()
    # Our card lists JSON-RPC first: the send went to "/" as a JSON-RPC call
    assert card.supported_interfaces[0].protocol_binding == "JSONRPC"
    assert remote.name == "chore agent"
    assert any(m == "POST" and p == "/" for m, p, _ in chores.requests)
    async with RemoteAgent(chores.card_url, binding="HTTP+JSON") as remote:
        done = await remote.get_task(task.id)
    assert done.id == task.id


def test_a_card_without_a_v1_interface_is_refused() -> None:
    # A v0.3 card (url, preferredTransport) of a 0.3 agent: read, but nothing this client speaks
    raw = {
        "name": "old",
        "description": "an 0.3 agent",
        "version": "1",
        "capabilities": {},
        "protocolVersion": "0.3.0",
        "url": "https://old.example/a2a",
        "preferredTransport": "JSONRPC",
    }
    with pytest.raises(ValueError, match=r"no A2A 1\.x interface"):
        choose_endpoint(AgentCard.model_validate(raw), raw)
    # The same card shape claiming 1.0 is used, its additional interfaces too
    newer = {
        **raw,
        "protocolVersion": "1.0",
        "additionalInterfaces": [{"url": "https://old.example", "transport": "HTTP+JSON"}],
    }
    assert choose_endpoint(AgentCard.model_validate(newer), newer, "HTTP+JSON").url == "https://old.example"


@pytest.mark.asyncio
async def test_a_private_address_is_refused_unless_allowed(chores: Agent) -> None:
    # Given the production policy: a loopback URL is refused before anything is sent
    with pytest.raises(RemoteAgentError, match="must use https"):
        RemoteAgent(chores.card_url, allow_private=False)
    with pytest.raises(RemoteAgentError, match="must not point at a private"):
        RemoteAgent("https://127.0.0.1:9/.well-known/agent-card.json", allow_private=False)
    # And a URL that passes the check is still vetted where it is dialled (the card may be cached)
    before = len(chores.requests)
    async with RemoteAgent(chores.card_url, allow_private=True, address_allowed=lambda address: False) as remote:
        with pytest.raises(RemoteAgentError, match="address that is not allowed"):
            await remote.get_task("any")
    assert len(chores.requests) == before
    # While the local stack's setting (A2A_ALLOW_PRIVATE_WEBHOOKS, set here) lets it through
    async with RemoteAgent(chores.card_url) as remote:
        assert (await remote.card()).name == "chore agent"


@pytest.mark.asyncio
async def test_credentials_are_sent_only_as_configured(monkeypatch: pytest.MonkeyPatch, chores: Agent) -> None:
    monkeypatch.setenv("PARTNER_TOKEN", "s3cret")
    # Given a remote called with a bearer token from the environment, and one called without
    async with RemoteAgent(chores.card_url, credentials=bearer(env="PARTNER_TOKEN")) as remote:
        with_token = await remote.send(message("chunks 1"))
    async with RemoteAgent(chores.card_url) as remote:
        without = await remote.send(message("chunks 1"))

    # Then the first's calls carried it, the second's carried no credential at all
    sent = {h.get("authorization") for m, _, h in chores.requests if m == "POST"}
    assert sent == {"Bearer s3cret", None}
    assert with_token.id != without.id


def test_a_missing_credential_is_an_error_not_an_anonymous_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PARTNER_TOKEN", raising=False)
    with pytest.raises(KeyError, match="PARTNER_TOKEN"):
        bearer(env="PARTNER_TOKEN")()


def test_call_keys_repeat_for_a_re_run_and_differ_between_calls() -> None:
    first, rerun = RemoteAgent("https://agent.example/card"), RemoteAgent("https://agent.example/card")
    keys = [first.call_key("task/message"), first.call_key("task/message")]
    assert keys[0] != keys[1]
    assert [rerun.call_key("task/message"), rerun.call_key("task/message")] == keys
    assert RemoteAgent("https://other.example/card").call_key("task/message") != keys[0]
