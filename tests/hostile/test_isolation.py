"""Tenant and owner isolation: nobody but alice, in her tenant, can read, list, cancel, subscribe
to, continue or configure pushes for her tasks, over any binding, on either store.

alice owns a COMPLETED, an INPUT_REQUIRED and a live WORKING task in the tenant ``acme``, and the
same three at the root, each with two push configs (``_isolation_support``). The attackers are
bob in her tenant, alice herself in another tenant and at the root, bob in another tenant, bob in a
tenant spelled like a forged store key, and (the only mismatch v0.3 can express, having no tenant)
bob and alice at the root. Each attacker tries every operation on each of the three tasks over
JSON-RPC 1.0, REST 1.0 (tenant path prefix, or root), the v0.3 JSON-RPC names and the v0.3 REST
routes under ``/v1``, against the memory store and the DynamoDB store on moto. Every attempt must:

* fail with the binding's exact TaskNotFound, as a plain response even for streaming operations
  (errors found before the first event are not streamed);
* be indistinguishable from the same request for a task that does not exist (A2A specification, section 3.3.2
  Error Handling: "MUST NOT reveal the existence"), and reveal none of alice's data;
* change nothing: alice's task heads (history, artifacts, version, flags), event logs, push configs
  and their delivery cursors, her listing, and the store's write count are as before.

Messages that do not name her task (her contextId, her messageId, her task ids as
``referenceTaskIds``) start a new task of the attacker's own (A2A specification, section 3.4.3: a contextId without a
taskId starts a new task; idempotency keys are scoped). Listing never shows her tasks. At the end
her live tasks still finish normally, their subscribers see it, and their push configs still
deliver her events to her URLs only. A few operations also go through the Lambda entry points,
where the owner comes from the API Gateway authorizer's context.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _isolation_support import (
    ATTACKER_HOOK,
    HOOK_ID,
    INLINE_ID,
    TENANT,
    VICTIM,
    Attacker,
    Build,
    Call,
    Victim,
    World,
    assert_no_secrets,
    assert_task_not_found,
    build_world,
    message_v03_rest,
    message_v03_rpc,
    message_v1,
    new_id,
    normalized,
    rpc,
    send,
    sse_data,
)
from moto.core import DEFAULT_ACCOUNT_ID
from moto.dynamodb.models import dynamodb_backends

from a2a_serverless.adapters import DynamoDBTaskStore, MemoryTaskStore
from a2a_serverless.ports import Scope, TaskStore
from a2a_serverless.push.delivery import deliver
from a2a_serverless.push.dispatch import items_for_event
from a2a_serverless.push.sender import SendResult
from a2a_serverless_dev.moto_fixes import fast_transactions
from a2a_serverless_dev.resources import create_resources, load_template
from testkit.aws import REGION, SerializedClient, moto_clients
from testkit.modules import load_file

# --------------------------------------------------------------------------- attackers

ATTACKERS_V1: dict[str, Attacker] = {
    "bob-same-tenant": Attacker("bob", TENANT, TENANT),
    "alice-other-tenant": Attacker(VICTIM, "globex", TENANT),
    "alice-root": Attacker(VICTIM, "", TENANT),
    "bob-other-tenant": Attacker("bob", "globex", TENANT),
    # '#' separates key parts in the DynamoDB layout: a tenant holding one must not reach alice.
    "bob-forged-key-tenant": Attacker("bob", f"{TENANT}#{VICTIM}", TENANT),
    "bob-root": Attacker("bob", "", ""),
}
# v0.3 carries no tenant: its callers are at the root.
ATTACKERS_V03: dict[str, Attacker] = {
    "bob-root": Attacker("bob", "", ""),
    "alice-root": Attacker(VICTIM, "", TENANT),
}


# --------------------------------------------------------------------------- operations


def _v1_rpc(method: str, **fields: Any) -> Build:
    def build(a: Attacker, v: Victim, task_id: str) -> Call:
        params = {k: (task_id if val == "{id}" else val) for k, val in fields.items()}
        return rpc(method, a.params(**params))

    return build


def _v1_send_rpc(method: str, *, with_context: bool = False, **config: Any) -> Build:
    def build(a: Attacker, v: Victim, task_id: str) -> Call:
        extra = {"contextId": v.context_id} if with_context else {}
        params: dict[str, Any] = {"message": message_v1(taskId=task_id, **extra)}
        if config:
            params["configuration"] = config
        return rpc(method, a.params(**params))

    return build


def _v1_rest(verb: str, path: str, body: Any = None, query: dict[str, str] | None = None) -> Build:
    def build(a: Attacker, v: Victim, task_id: str) -> Call:
        return Call(verb, a.prefix() + path.replace("{id}", task_id), body, query)

    return build


def _v1_send_rest(path: str, *, with_context: bool = False, body_tenant: bool = False, **config: Any) -> Build:
    def build(a: Attacker, v: Victim, task_id: str) -> Call:
        extra = {"contextId": v.context_id} if with_context else {}
        body: dict[str, Any] = {"message": message_v1(taskId=task_id, **extra)}
        if config:
            body["configuration"] = config
        if body_tenant:  # the path decides the tenant, never the body
            body["tenant"] = v.tenant
        return Call("POST", a.prefix() + path, body)

    return build


INLINE_PUSH = {"taskPushNotificationConfig": {"url": ATTACKER_HOOK}}
CONFIGS = "/tasks/{id}/pushNotificationConfigs"
PUSH = "tasks/pushNotificationConfig"

REJECTED: dict[str, dict[str, Build]] = {
    "get": {
        "jsonrpc-1.0": _v1_rpc("GetTask", id="{id}"),
        "rest-1.0": _v1_rest("GET", "/tasks/{id}"),
        "jsonrpc-0.3": lambda a, v, t: rpc("tasks/get", {"id": t}),
        "rest-0.3": lambda a, v, t: Call("GET", f"/v1/tasks/{t}"),
    },
    "get-with-history": {
        "jsonrpc-1.0": _v1_rpc("GetTask", id="{id}", historyLength=100),
        "rest-1.0": _v1_rest("GET", "/tasks/{id}", query={"historyLength": "100"}),
        "jsonrpc-0.3": lambda a, v, t: rpc("tasks/get", {"id": t, "historyLength": 100}),
        "rest-0.3": lambda a, v, t: Call("GET", f"/v1/tasks/{t}", params={"historyLength": "100"}),
    },
    "get-tenant-in-query": {
        "rest-1.0": lambda a, v, t: Call("GET", f"{a.prefix()}/tasks/{t}", params={"tenant": v.tenant}),
    },
    "cancel": {
        "jsonrpc-1.0": _v1_rpc("CancelTask", id="{id}"),
        "rest-1.0": _v1_rest("POST", "/tasks/{id}:cancel", {}),
        "jsonrpc-0.3": lambda a, v, t: rpc("tasks/cancel", {"id": t}),
        "rest-0.3": lambda a, v, t: Call("POST", f"/v1/tasks/{t}:cancel", {}),
    },
    "subscribe": {
        "jsonrpc-1.0": _v1_rpc("SubscribeToTask", id="{id}"),
        "rest-1.0": _v1_rest("POST", "/tasks/{id}:subscribe"),
        "jsonrpc-0.3": lambda a, v, t: rpc("tasks/resubscribe", {"id": t}),
        "rest-0.3": lambda a, v, t: Call("POST", f"/v1/tasks/{t}:subscribe"),
    },
    "subscribe-get": {
        "rest-1.0": _v1_rest("GET", "/tasks/{id}:subscribe"),
        "rest-0.3": lambda a, v, t: Call("GET", f"/v1/tasks/{t}:subscribe"),
    },
    "send-continue": {
        "jsonrpc-1.0": _v1_send_rpc("SendMessage"),
        "rest-1.0": _v1_send_rest("/message:send"),
        "jsonrpc-0.3": lambda a, v, t: rpc("message/send", {"message": message_v03_rpc(taskId=t)}),
        "rest-0.3": lambda a, v, t: Call("POST", "/v1/message:send", {"message": message_v03_rest(taskId=t)}),
    },
    "send-continue-with-context": {
        "jsonrpc-1.0": _v1_send_rpc("SendMessage", with_context=True),
        "rest-1.0": _v1_send_rest("/message:send", with_context=True),
        "jsonrpc-0.3": lambda a, v, t: rpc(
            "message/send", {"message": message_v03_rpc(taskId=t, contextId=v.context_id)}
        ),
        "rest-0.3": lambda a, v, t: Call(
            "POST", "/v1/message:send", {"message": message_v03_rest(taskId=t, contextId=v.context_id)}
        ),
    },
    "send-continue-not-blocking": {
        "jsonrpc-1.0": _v1_send_rpc("SendMessage", returnImmediately=True),
        "rest-1.0": _v1_send_rest("/message:send", returnImmediately=True),
        "jsonrpc-0.3": lambda a, v, t: rpc(
            "message/send", {"message": message_v03_rpc(taskId=t), "configuration": {"blocking": False}}
        ),
    },
    "send-continue-with-inline-push": {
        "jsonrpc-1.0": _v1_send_rpc("SendMessage", **INLINE_PUSH),
        "rest-1.0": _v1_send_rest("/message:send", **INLINE_PUSH),
        "jsonrpc-0.3": lambda a, v, t: rpc(
            "message/send",
            {"message": message_v03_rpc(taskId=t), "configuration": {"pushNotificationConfig": {"url": ATTACKER_HOOK}}},
        ),
    },
    "send-continue-tenant-in-body": {
        "rest-1.0": _v1_send_rest("/message:send", body_tenant=True),
    },
    "stream-continue": {
        "jsonrpc-1.0": _v1_send_rpc("SendStreamingMessage"),
        "rest-1.0": _v1_send_rest("/message:stream"),
        "jsonrpc-0.3": lambda a, v, t: rpc("message/stream", {"message": message_v03_rpc(taskId=t)}),
        "rest-0.3": lambda a, v, t: Call("POST", "/v1/message:stream", {"message": message_v03_rest(taskId=t)}),
    },
    "push-create": {
        "jsonrpc-1.0": _v1_rpc("CreateTaskPushNotificationConfig", taskId="{id}", url=ATTACKER_HOOK),
        "rest-1.0": _v1_rest("POST", CONFIGS, {"url": ATTACKER_HOOK}),
        "jsonrpc-0.3": lambda a, v, t: rpc(
            f"{PUSH}/set", {"taskId": t, "pushNotificationConfig": {"url": ATTACKER_HOOK}}
        ),
        "rest-0.3": lambda a, v, t: Call(
            "POST",
            f"/v1/tasks/{t}/pushNotificationConfigs",
            {"config": {"pushNotificationConfig": {"url": ATTACKER_HOOK}}},
        ),
    },
    "push-overwrite-victims-config": {
        "jsonrpc-1.0": _v1_rpc("CreateTaskPushNotificationConfig", taskId="{id}", id=HOOK_ID, url=ATTACKER_HOOK),
        "rest-1.0": _v1_rest("POST", CONFIGS, {"id": HOOK_ID, "url": ATTACKER_HOOK}),
        "jsonrpc-0.3": lambda a, v, t: rpc(
            f"{PUSH}/set", {"taskId": t, "pushNotificationConfig": {"id": HOOK_ID, "url": ATTACKER_HOOK}}
        ),
        "rest-0.3": lambda a, v, t: Call(
            "POST",
            f"/v1/tasks/{t}/pushNotificationConfigs",
            {"configId": HOOK_ID, "config": {"pushNotificationConfig": {"url": ATTACKER_HOOK}}},
        ),
    },
    "push-create-tenant-in-body": {
        "rest-1.0": lambda a, v, t: Call(
            "POST", f"{a.prefix()}/tasks/{t}/pushNotificationConfigs", {"url": ATTACKER_HOOK, "tenant": v.tenant}
        ),
    },
    "push-get": {
        "jsonrpc-1.0": _v1_rpc("GetTaskPushNotificationConfig", taskId="{id}", id=HOOK_ID),
        "rest-1.0": _v1_rest("GET", f"{CONFIGS}/{HOOK_ID}"),
        "jsonrpc-0.3": lambda a, v, t: rpc(f"{PUSH}/get", {"id": t, "pushNotificationConfigId": HOOK_ID}),
        "rest-0.3": lambda a, v, t: Call("GET", f"/v1/tasks/{t}/pushNotificationConfigs/{HOOK_ID}"),
    },
    "push-get-inline": {
        "jsonrpc-1.0": _v1_rpc("GetTaskPushNotificationConfig", taskId="{id}", id=INLINE_ID),
        "rest-1.0": _v1_rest("GET", f"{CONFIGS}/{INLINE_ID}"),
        "jsonrpc-0.3": lambda a, v, t: rpc(f"{PUSH}/get", {"id": t}),
        "rest-0.3": lambda a, v, t: Call("GET", f"/v1/tasks/{t}/pushNotificationConfigs/{INLINE_ID}"),
    },
    "push-list": {
        "jsonrpc-1.0": _v1_rpc("ListTaskPushNotificationConfigs", taskId="{id}"),
        "rest-1.0": _v1_rest("GET", CONFIGS),
        "jsonrpc-0.3": lambda a, v, t: rpc(f"{PUSH}/list", {"id": t}),
        "rest-0.3": lambda a, v, t: Call("GET", f"/v1/tasks/{t}/pushNotificationConfigs"),
    },
    "push-list-paged": {
        "jsonrpc-1.0": _v1_rpc("ListTaskPushNotificationConfigs", taskId="{id}", pageSize=1),
        "rest-1.0": _v1_rest("GET", CONFIGS, query={"pageSize": "1"}),
    },
    "push-delete": {
        "jsonrpc-1.0": _v1_rpc("DeleteTaskPushNotificationConfig", taskId="{id}", id=HOOK_ID),
        "rest-1.0": _v1_rest("DELETE", f"{CONFIGS}/{HOOK_ID}"),
        "jsonrpc-0.3": lambda a, v, t: rpc(f"{PUSH}/delete", {"id": t, "pushNotificationConfigId": HOOK_ID}),
        "rest-0.3": lambda a, v, t: Call("DELETE", f"/v1/tasks/{t}/pushNotificationConfigs/{HOOK_ID}"),
    },
    # Delete is idempotent for a config that does not exist, but only on a task the caller can see.
    "push-delete-missing-config": {
        "jsonrpc-1.0": _v1_rpc("DeleteTaskPushNotificationConfig", taskId="{id}", id="no-such-config"),
        "rest-1.0": _v1_rest("DELETE", f"{CONFIGS}/no-such-config"),
        "jsonrpc-0.3": lambda a, v, t: rpc(f"{PUSH}/delete", {"id": t, "pushNotificationConfigId": "no-such-config"}),
        "rest-0.3": lambda a, v, t: Call("DELETE", f"/v1/tasks/{t}/pushNotificationConfigs/no-such-config"),
    },
}


def _attacks() -> Iterator[Any]:
    for operation, builds in REJECTED.items():
        for binding, build in builds.items():
            attackers = ATTACKERS_V1 if binding.endswith("1.0") else ATTACKERS_V03
            for name, attacker in attackers.items():
                yield pytest.param(attacker, binding, build, id=f"{name}-{binding}-{operation}")


# --------------------------------------------------------------------------- the worlds


@pytest.fixture(scope="module")
def aws() -> Iterator[tuple[Any, Any]]:
    """moto, in process, for the whole module; fake credentials."""
    with moto_clients() as clients:
        yield clients


_prefixes = itertools.count()


def _tables(aws: tuple[Any, Any]) -> tuple[Any, Any, dict[str, Any]]:
    """A fresh set of the template's tables and queues (so keys and indexes are the deployed ones)."""
    dynamodb, sqs = aws
    resources = create_resources(dynamodb, sqs, prefix=f"isolation-{next(_prefixes)}", template=load_template())
    return dynamodb, sqs, {"tables": resources.tables, "queues": resources.queue_urls}


@pytest.fixture(scope="module", params=["memory", "dynamodb"])
def world(request: pytest.FixtureRequest) -> Iterator[World]:
    inner: TaskStore
    if request.param == "memory":
        inner = MemoryTaskStore()
        overrides: dict[str, Any] = {"store": "memory"}
    else:
        dynamodb, _, created = _tables(request.getfixturevalue("aws"))
        table = created["tables"]["TasksTable"]
        client = SerializedClient(dynamodb)
        inner = DynamoDBTaskStore(table, client=client)
        # Blocking sends and streams poll the table: at moto's speed, poll less often.
        overrides = {"store": "dynamodb", "table_name": table, "poll_interval_seconds": 0.02}
        overrides["dump_table"] = lambda: _dump(client, table)
    # moto's TransactWriteItems deep-copies the table per item; the local stack's two-phase
    # replacement keeps DynamoDB's semantics (as in tests/contract) at a fraction of the cost.
    with fast_transactions():
        built = build_world(request.param, inner, **overrides)
        try:
            yield built
        finally:
            built.executor.gate.set()
            built.runtime.queue.shutdown()  # type: ignore[attr-defined]


def _dump(client: SerializedClient, table: str) -> list[Any]:
    """Every item of the table as moto stores it (read from its backend: a Scan through the API
    costs more than all the requests of a case together)."""
    stored = dynamodb_backends[DEFAULT_ACCOUNT_ID][REGION].get_table(table)
    with client.lock:  # no worker thread may write meanwhile
        items = [item.to_json()["Attributes"] for rows in stored.items.values() for item in rows.values()]
    return sorted(items, key=lambda item: (item["pk"]["S"], item["sk"]["S"]))


# --------------------------------------------------------------------------- every attempt is TaskNotFound


@pytest.mark.asyncio
@pytest.mark.parametrize(("attacker", "binding", "build"), list(_attacks()))
async def test_foreign_task_is_not_found_and_nothing_changes(
    world: World, attacker: Attacker, binding: str, build: Build
) -> None:
    before = world.everything()
    async with world.client() as http:
        for victim in world.targets(attacker.target):
            what = f"[{world.kind}] {victim.label}"
            answer = await send(http, build(attacker, victim, victim.id), attacker.headers(binding))
            assert_task_not_found(answer, binding, what)
            assert_no_secrets(answer, what, attacker.target)
            missing = new_id()
            control = await send(http, build(attacker, victim, missing), attacker.headers(binding))
            assert normalized(answer, victim.id) == normalized(control, missing), (
                f"{what}: the answer for alice's task differs from the one for a missing task"
            )
    assert world.everything() == before, "a rejected request changed the store"


# --------------------------------------------------------------------------- listing


def _list_call(attacker: Attacker, binding: str, query: dict[str, Any]) -> Call:
    if binding == "jsonrpc-1.0":
        return rpc("ListTasks", attacker.params(**query))
    params = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in query.items()}
    return Call("GET", attacker.prefix() + "/tasks", params=params)


def _list_result(answer: httpx.Response, binding: str) -> dict[str, Any]:
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body["result"] if binding == "jsonrpc-1.0" else body


def _queries(world: World, attacker: Attacker) -> list[dict[str, Any]]:
    queries: list[dict[str, Any]] = [{}, {"includeArtifacts": True, "pageSize": 100, "historyLength": 100}]
    queries += [{"contextId": v.context_id} for v in world.targets(attacker.target)]
    queries += [{"status": s} for s in ("TASK_STATE_COMPLETED", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_WORKING")]
    queries.append({"statusTimestampAfter": "2000-01-01T00:00:00Z", "pageSize": 1})
    return queries


def _expected_listing(world: World, scope: Scope, query: dict[str, Any]) -> list[str]:
    """What the attacker's own scope holds for ``query``: alice's tasks there only if the scope is
    hers (alice at the root), and the tasks attackers created in it."""
    expected = []
    for task_id in world.known_tasks(scope):
        record = world.store.get_task(scope, task_id)
        assert record is not None
        if query.get("contextId") not in (None, record.task.context_id):
            continue
        if query.get("status") not in (None, record.state.value):
            continue
        expected.append(task_id)
    return expected


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", ["jsonrpc-1.0", "rest-1.0"])
@pytest.mark.parametrize("attacker", [pytest.param(a, id=n) for n, a in ATTACKERS_V1.items()])
async def test_listing_never_shows_foreign_tasks(world: World, attacker: Attacker, binding: str) -> None:
    before = world.snapshot(attacker.target)
    foreign = {v.id for v in world.targets(attacker.target)}
    async with world.client() as http:
        for query in _queries(world, attacker):
            what = f"[{world.kind}] ListTasks {query}"
            answer = await send(http, _list_call(attacker, binding, query), attacker.headers(binding))
            assert_no_secrets(answer, what, attacker.target)
            result = _list_result(answer, binding)
            listed = [t["id"] for t in result["tasks"]]
            assert not foreign & set(listed), f"{what}: alice's tasks listed"
            expected = _expected_listing(world, attacker.scope, query)
            assert result["totalSize"] == len(expected), f"{what}: {result['totalSize']} != {len(expected)}"
            if query.get("pageSize") == 1:
                assert set(listed) <= set(expected), what
            else:
                assert sorted(listed) == sorted(expected), what
                assert result["nextPageToken"] == "", what
    assert world.snapshot(attacker.target) == before


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", ["jsonrpc-1.0", "rest-1.0"])
@pytest.mark.parametrize("attacker", [pytest.param(a, id=n) for n, a in ATTACKERS_V1.items()])
async def test_victims_page_tokens_are_refused(world: World, attacker: Attacker, binding: str) -> None:
    """A page token from alice's listing, replayed by another caller, selects nothing: InvalidParams."""
    alice = Attacker(VICTIM, attacker.target, attacker.target)  # alice, where her tasks are
    async with world.client() as http:
        page = _list_result(
            await send(http, _list_call(alice, binding, {"pageSize": 1}), alice.headers(binding)), binding
        )
        token = page["nextPageToken"]
        assert token, "alice's first page of one must have a next page"
        answer = await send(
            http, _list_call(attacker, binding, {"pageSize": 1, "pageToken": token}), attacker.headers(binding)
        )
    assert_no_secrets(answer, "page token replay", attacker.target)
    if binding == "jsonrpc-1.0":
        assert answer.json()["error"]["code"] == -32602, answer.text
    else:
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"]["details"][0]["reason"] == "INVALID_PARAMS"


# --------------------------------------------------------------------------- messages that start new tasks


def _new_task_calls() -> Iterator[Any]:
    """(binding, kind) pairs: a message reusing alice's contextId, messageId or task ids without a
    taskId must start a task of the caller's own."""
    for binding in ("jsonrpc-1.0", "rest-1.0", "jsonrpc-0.3", "rest-0.3"):
        attackers = ATTACKERS_V1 if binding.endswith("1.0") else ATTACKERS_V03
        kinds = ["reuse-context", "reuse-context-stream", "reuse-message-id"]
        if binding != "rest-0.3":  # the v0.3 proto's Message has no referenceTaskIds
            kinds.append("reference-task-ids")
        for name, attacker in attackers.items():
            for kind in kinds:
                yield pytest.param(attacker, binding, kind, id=f"{name}-{binding}-{kind}")


def _new_task_call(world: World, attacker: Attacker, binding: str, kind: str) -> tuple[Call, Victim]:
    # The INPUT_REQUIRED task: the one a misrouted message could attach to.
    victim = next(v for v in world.targets(attacker.target) if v.name == "waiting")
    extra: dict[str, Any] = {}
    if kind.startswith("reuse-context"):
        extra["contextId"] = victim.context_id
    elif kind == "reference-task-ids":
        extra["referenceTaskIds"] = [v.id for v in world.targets(attacker.target)]
    stream = kind.endswith("stream")
    if binding.endswith("1.0"):
        message = message_v1(**extra)
        if kind == "reuse-message-id":
            message["messageId"] = victim.message_id
        if binding == "jsonrpc-1.0":
            return rpc("SendStreamingMessage" if stream else "SendMessage", attacker.params(message=message)), victim
        return Call(
            "POST", attacker.prefix() + ("/message:stream" if stream else "/message:send"), {"message": message}
        ), victim
    if binding == "jsonrpc-0.3":
        message = message_v03_rpc(**extra)
        if kind == "reuse-message-id":
            message["messageId"] = victim.message_id
        return rpc("message/stream" if stream else "message/send", {"message": message}), victim
    message = message_v03_rest(**extra)
    if kind == "reuse-message-id":
        message["messageId"] = victim.message_id
    return Call("POST", "/v1/message:stream" if stream else "/v1/message:send", {"message": message}), victim


def _created_task(answer: httpx.Response, binding: str, stream: bool) -> dict[str, Any]:
    assert answer.status_code == 200, answer.text
    if stream:
        frames = sse_data(answer)
        assert frames, answer.text
        first = frames[0]["result"] if binding.startswith("jsonrpc") else frames[0]
        task: dict[str, Any] = first if binding == "jsonrpc-0.3" else first["task"]
        return task
    body = answer.json()
    if binding.startswith("jsonrpc"):
        assert "result" in body, body
        result: dict[str, Any] = body["result"]
        return result if binding == "jsonrpc-0.3" else result["task"]
    created: dict[str, Any] = body["task"]
    return created


@pytest.mark.asyncio
@pytest.mark.parametrize(("attacker", "binding", "kind"), list(_new_task_calls()))
async def test_message_without_task_id_starts_a_task_of_ones_own(
    world: World, attacker: Attacker, binding: str, kind: str
) -> None:
    victims_scope = Scope(attacker.target, VICTIM)
    before = world.snapshot(attacker.target)
    writes_before = world.store.writes(victims_scope)
    call, victim = _new_task_call(world, attacker, binding, kind)
    async with world.client() as http:
        answer = await send(http, call, attacker.headers(binding))
        assert_no_secrets(answer, kind, attacker.target)
        task = _created_task(answer, binding, kind.endswith("stream"))
        new = task["id"]
        world.created.setdefault(attacker.scope, []).append(new)
        assert new not in world.victim_ids(), f"{kind}: the answer is alice's task"
        if kind.startswith("reuse-context"):
            assert task["contextId"] == victim.context_id  # kept: A2A specification, section 3.4.1
        settled = world.wait_quiet(attacker.scope, new)
        assert settled.state.value == "TASK_STATE_COMPLETED", settled.state
        texts = [p.text for m in settled.task.history for p in m.parts if p.text]
        assert texts
        assert all("secret-alice" not in t for t in texts), texts
        (run,) = world.executor.runs_of(new)
        assert (run.caller, run.tenant, run.current_task_id) == (attacker.principal, attacker.tenant, new)
        assert run.related_task_ids == (), f"{kind}: the agent was given alice's tasks"

        if binding.endswith("1.0") or attacker.tenant == "":
            # The caller's listing of that context holds its own tasks only; alice's, hers.
            v1 = "jsonrpc-1.0"
            query = {"contextId": task["contextId"]}
            mine = _list_result(await send(http, _list_call(attacker, v1, query), attacker.headers(v1)), v1)
            assert new in {t["id"] for t in mine["tasks"]}
            assert not {t["id"] for t in mine["tasks"]} & {v.id for v in world.targets(attacker.target)}
    assert world.store.writes(victims_scope) == writes_before, "a write landed in alice's scope"
    after = world.snapshot(attacker.target)
    after["writes"] = before["writes"]  # the attacker's own task was written, elsewhere
    assert after == before, "alice's tasks changed"
    if kind.startswith("reuse-context"):
        alice = Attacker(VICTIM, attacker.target, attacker.target)
        async with world.client() as http:
            theirs = _list_result(
                await send(
                    http,
                    _list_call(alice, "jsonrpc-1.0", {"contextId": victim.context_id}),
                    alice.headers("jsonrpc-1.0"),
                ),
                "jsonrpc-1.0",
            )
        assert [t["id"] for t in theirs["tasks"]] == [victim.id], "alice's context lists another caller's task"


# --------------------------------------------------------------------------- the Lambda entry points


def _lambda_events() -> Any:
    """tests/functions/lambda_events.py: the recorded API Gateway event, re-aimed at any route."""
    return load_file(Path(__file__).parents[1] / "functions" / "lambda_events.py", "_isolation_lambda_events")


@pytest.fixture
def lambda_env(aws: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch) -> Iterator[DynamoDBTaskStore]:
    """The environment a deployed function sees (apigateway auth: the owner is the authorizer's
    principal), on fresh template tables in the module's moto."""
    from a2a_serverless.wiring import reset_runtime

    dynamodb, _, created = _tables(aws)
    table = created["tables"]["TasksTable"]
    for key, value in {
        "POWERTOOLS_METRICS_NAMESPACE": "A2ATest",
        "A2A_STORE": "dynamodb",
        "A2A_TABLE_NAME": table,
        "A2A_QUEUE_URL": created["queues"]["WorkQueue"],
        "A2A_AUTH_MODE": "apigateway",
    }.items():
        monkeypatch.setenv(key, value)
    reset_runtime()
    yield DynamoDBTaskStore(table, client=dynamodb)
    reset_runtime()


@pytest.mark.parametrize(
    ("principal", "tenant"),
    [
        pytest.param("user-bob", TENANT, id="bob-same-tenant"),
        pytest.param("user-alice", "globex", id="alice-other-tenant"),
        pytest.param("user-alice", "", id="alice-root"),
    ],
)
def test_lambda_functions_scope_by_the_authorizers_principal(
    lambda_env: DynamoDBTaskStore, principal: str, tenant: str
) -> None:
    events = _lambda_events()
    prefix = f"/{tenant}" if tenant else ""
    resource_prefix = "/{tenant}" if tenant else ""

    def invoke(module: str, method: str, path: str, resource: str, who: str, **kwargs: Any) -> dict[str, Any]:
        event = events.api_event(method, path, principal=who, resource=resource, **kwargs)
        result: dict[str, Any] = events.invoke(module, event)
        return result

    # Given alice's task in acme, with a push config, made through the functions as she calls them
    sent = invoke(
        "send_message",
        "POST",
        f"/{TENANT}/message:send",
        "/{tenant}/message:send",
        "user-alice",
        body={
            "message": {"messageId": "alice-lambda", "role": "ROLE_USER", "parts": [{"text": "secret-alice"}]},
            "configuration": {"returnImmediately": True},
        },
    )
    assert sent["statusCode"] == 200, sent
    task = events.body(sent)["task"]
    configs = f"/{TENANT}/tasks/{task['id']}/pushNotificationConfigs"
    made = invoke(
        "create_push_config",
        "POST",
        configs,
        "/{tenant}/tasks/{task_id}/pushNotificationConfigs",
        "user-alice",
        body={"id": HOOK_ID, "url": "https://93.184.215.14/alice/lambda", "token": "alice-token"},
    )
    assert made["statusCode"] == 200, made
    scope = Scope(TENANT, "user-alice")
    before = (lambda_env.get_task(scope, task["id"]), lambda_env.list_push_configs(scope, task["id"]))

    # When another principal or tenant goes after it through each function
    mine = f"{prefix}/tasks/{task['id']}/pushNotificationConfigs"
    res = resource_prefix + "/tasks/{task_id}/pushNotificationConfigs"
    attempts = {
        "continue": invoke(
            "send_message",
            "POST",
            f"{prefix}/message:send",
            resource_prefix + "/message:send",
            principal,
            body={"message": message_v1(taskId=task["id"])},
        ),
        "push-create": invoke("create_push_config", "POST", mine, res, principal, body={"url": ATTACKER_HOOK}),
        "push-get": invoke("get_push_config", "GET", f"{mine}/{HOOK_ID}", res + "/{id}", principal),
        "push-list": invoke("list_push_configs", "GET", mine, res, principal),
        "push-delete": invoke("delete_push_config", "DELETE", f"{mine}/{HOOK_ID}", res + "/{id}", principal),
    }
    # Then each is TaskNotFound, as for a task that does not exist
    for name, response in attempts.items():
        assert response["statusCode"] == 404, (name, response)
        error = events.body(response)["error"]
        assert error["details"][0]["reason"] == "TASK_NOT_FOUND", (name, error)
        assert "secret-alice" not in response["body"]
        assert "93.184.215.14" not in response["body"]
    # And listing shows none of alice's tasks, even filtered by her context
    for query in ({}, {"contextId": task["contextId"]}, {"status": "TASK_STATE_SUBMITTED"}):
        listed = invoke("list_tasks", "GET", f"{prefix}/tasks", resource_prefix + "/tasks", principal, query=query)
        assert listed["statusCode"] == 200, listed
        assert events.body(listed)["tasks"] == [], (query, listed)
        assert events.body(listed)["totalSize"] == 0
    # And nothing of alice's changed
    assert (lambda_env.get_task(scope, task["id"]), lambda_env.list_push_configs(scope, task["id"])) == before
    owner = invoke("list_tasks", "GET", f"/{TENANT}/tasks", "/{tenant}/tasks", "user-alice")
    assert [t["id"] for t in events.body(owner)["tasks"]] == [task["id"]]


# --------------------------------------------------------------------------- and alice's tasks live on


class RecordingSender:
    """A webhook sender that records what it would POST, and reports it delivered."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any], dict[str, str]]] = []

    def send(self, url: str, body: bytes, headers: Any) -> SendResult:
        self.sent.append((url, json.loads(body), dict(headers)))
        return SendResult(outcome="delivered", status=204, reason="ok")


@pytest.mark.asyncio
async def test_victims_tasks_still_finish_and_deliver_to_their_own_hooks(world: World) -> None:
    """Runs after the attacks on this world (last in the module): alice's live tasks finish, her
    subscribers see it, her waiting task takes her answer, and her configs deliver her events to
    her URLs only; no attacker scope has a delivery for any of them."""
    working = [v for v in world.victims if v.name == "working"]
    async with world.client() as http:
        alice = {"A2A-Version": "1.0", "Authorization": "Bearer key-alice"}
        subscriptions = [
            asyncio.ensure_future(
                send(http, Call("POST", f"{'/' + v.tenant if v.tenant else ''}/tasks/{v.id}:subscribe"), alice, 30)
            )
            for v in working
        ]
        await asyncio.sleep(0.2)
        world.executor.gate.set()
        for v, subscription in zip(working, subscriptions, strict=True):
            frames = sse_data(await subscription)
            assert frames[0]["task"]["id"] == v.id
            assert frames[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED", frames[-1]
        for v in (v for v in world.victims if v.name == "waiting"):
            params: dict[str, Any] = {"message": {**message_v1("Alice"), "taskId": v.id}}
            if v.tenant:
                params["tenant"] = v.tenant
            answer = await send(http, rpc("SendMessage", params), alice)
            assert answer.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", answer.text
    for v in world.victims:
        record = world.wait_quiet(v.scope, v.id)
        assert record.state.value == "TASK_STATE_COMPLETED", (v.label, record.state)
        assert not record.cancel_requested
        items = items_for_event(world.store, v.scope, v.id, record.last_seq)
        assert sorted(i.config_id for i in items) == [HOOK_ID, INLINE_ID], v.label
        sender = RecordingSender()
        for item in items:
            result = deliver(
                item, store=world.store, sender=sender, signer=None, attempt=1, max_attempts=1, timeout_seconds=1
            )
            assert not result.dead_letters
        where = v.tenant or "root"
        hook = f"https://93.184.215.14/alice/{where}/{v.name}"
        # The created config gets the events after its creation: none for the task done by then.
        expected = {f"{hook}/inline"} | (set() if v.name == "done" else {f"{hook}/created"})
        assert {url for url, _, _ in sender.sent} == expected, sender.sent
        for url, _, headers in sender.sent:
            if url.endswith("/inline"):
                assert headers["X-A2A-Notification-Token"] == f"alice-token-{where}"
            else:
                assert headers["Authorization"] == f"Bearer alice-credential-{where}"
        assert all(v.id in json.dumps(body) for _, body, _ in sender.sent)
        inline = [body for url, body, _ in sender.sent if url.endswith("/inline")]
        assert len(inline) == record.last_seq, "the inline config gets every event"
        for other in ("bob", VICTIM):
            for tenant in ("", TENANT, "globex", f"{TENANT}#{VICTIM}"):
                if Scope(tenant, other) != v.scope:
                    assert items_for_event(world.store, Scope(tenant, other), v.id, record.last_seq) == []
