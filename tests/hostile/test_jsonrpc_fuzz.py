"""Generated JSON-RPC requests against ``POST /``: envelopes, params and raw bytes (hypothesis).

Every method is called, the v1.0 names with ``A2A-Version: 1.0`` and the v0.3 names without a
version, with params that mostly follow the method's schema but have one node mutated (wrong type,
missing, unknown extra field, wrong enum, bad id, negative or huge number), params of any JSON type,
envelopes with every JSON type for ``id``, ``jsonrpc`` and ``method``, batches, and raw bytes (not
JSON, truncated JSON, BOMs, ``NaN``/``Infinity``, duplicate keys, deep nesting, lone surrogates).

The oracle is the JSON-RPC 2.0 envelope rules as the A2A specification states them (sections 9 JSON-RPC Protocol
Binding, 5.4 Error Code Mappings, 3.6 Versioning), written here independently of the product's code:

* never a 5xx; always one JSON-RPC 2.0 response (batches are refused with -32600: the binding defines single requests);
* the id is echoed when it is a string or an integer of a JSON object that parsed, else null;
* the envelope errors are predicted exactly (parse -32700, invalid request -32600, unknown method
  -32601, version -32009, params not an object -32602); a well-formed call either succeeds or fails
  with an A2A error from the spec's table (-32602, -32001..-32009), never -32603;
* ``error.data`` has the caller's version's shape (1.0: typed details, ErrorInfo first; 0.3: one
  flat object), and no Python internals leak;
* a success is the method's result shape, checked strictly against the reference SDK's protobuf
  (1.0) or its v0.3 pydantic models (0.3);
* an error changes nothing in the store (write count and a snapshot of every stored item).

The examples are derandomized, so CI runs the same cases every time.
"""

from __future__ import annotations

import base64
import copy
import json
import math
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _jsonrpc_support import (
    HOOK,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    OPERATION_CODES,
    PARSE_ERROR,
    V1,
    VERSION_NOT_SUPPORTED,
    Rig,
    assert_no_leak,
    assert_rpc_error,
    assert_rpc_error_body,
    rig,
    sse_events,
)
from a2a.compat.v0_3 import types as t03
from a2a.types import a2a_pb2 as pb
from google.protobuf import json_format
from google.protobuf.message import Message as PbMessage
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from testkit.json_paths import node_paths
from testkit.spec import V1_METHODS

_PUSH = "tasks/pushNotificationConfig"
V03_METHODS = (
    "message/send",
    "message/stream",
    "tasks/get",
    "tasks/cancel",
    "tasks/resubscribe",
    f"{_PUSH}/set",
    f"{_PUSH}/get",
    f"{_PUSH}/list",
    f"{_PUSH}/delete",
    "agent/getAuthenticatedExtendedCard",
)
UNKNOWN_METHODS = ("", "sendMessage", "tasks/list", "message/Send", "rpc.discover", "SendMessage ", "\u0000", "ü")
STREAMING = {"SendStreamingMessage", "SubscribeToTask", "message/stream", "tasks/resubscribe"}

BASE = settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def fuzz(examples: int) -> settings:
    return settings(BASE, max_examples=examples)


# --------------------------------------------------------------------------- the oracle

_V1_VERSION = re.compile(r"^\s*1\.0(?:\.\d+)?\s*$")
_V03_VERSION = re.compile(r"^\s*0\.3(?:\.\d+)?\s*$")
MAX_DEPTH = 100  # the README's documented nesting limit


class Rejected(Exception):
    """What the oracle predicts for an envelope that cannot reach an operation."""

    def __init__(self, code: int, rpc_id: Any, legacy: bool) -> None:
        super().__init__(code)
        self.code, self.rpc_id, self.legacy = code, rpc_id, legacy


def _depth(value: Any) -> int:
    """Nesting depth of arrays and objects (iterative: the values can be thousands deep)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def strict_json(raw: bytes) -> Any:
    """RFC 8259 JSON within our documented limits, or ValueError."""
    try:
        value = json.loads(raw.decode("utf-8"), parse_constant=_no_constant, parse_float=_finite)
        json.dumps(value, ensure_ascii=False).encode("utf-8")  # no lone surrogates
    except RecursionError as exc:
        raise ValueError("too deep") from exc
    if _depth(value) > MAX_DEPTH:
        raise ValueError("too deep")
    return value


def predict(raw: bytes, version: str | None) -> tuple[str, Any, bool]:
    """(method name, the id to echo, legacy error shape) for a call that reaches its operation;
    raises Rejected with the exact envelope error otherwise."""
    header = (version or "").strip()
    legacy = not header or header.startswith("0.")
    asks_v1 = bool(_V1_VERSION.match(header))
    try:
        envelope = strict_json(raw)
    except ValueError:
        raise Rejected(PARSE_ERROR, None, legacy) from None
    if not isinstance(envelope, dict):  # a batch (array) included: not supported
        raise Rejected(INVALID_REQUEST, None, legacy)
    raw_id = envelope.get("id")
    if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool):
        rpc_id = raw_id
    elif raw_id is None and "id" in envelope:
        rpc_id = None
    else:
        raise Rejected(INVALID_REQUEST, None, legacy)
    method = envelope.get("method")
    if envelope.get("jsonrpc") != "2.0" or not isinstance(method, str):
        raise Rejected(INVALID_REQUEST, rpc_id, legacy)
    if method in V03_METHODS and asks_v1:
        raise Rejected(METHOD_NOT_FOUND, rpc_id, False)
    legacy = method in V03_METHODS or (legacy and method not in V1_METHODS)
    if method not in V1_METHODS and method not in V03_METHODS:
        raise Rejected(METHOD_NOT_FOUND, rpc_id, legacy)
    if (method in V1_METHODS and not asks_v1) or (method in V03_METHODS and header and not _V03_VERSION.match(header)):
        raise Rejected(VERSION_NOT_SUPPORTED, rpc_id, legacy)
    params = envelope.get("params")
    if params is not None and not isinstance(params, dict):
        raise Rejected(INVALID_PARAMS, rpc_id, legacy)
    return method, rpc_id, legacy


# --------------------------------------------------------------------------- success shapes


def _pb(message: PbMessage) -> Callable[[Any], None]:
    def check(result: Any) -> None:
        json_format.ParseDict(result, message.__class__())  # unknown fields are errors

    return check


def _v1_delete(result: Any) -> None:
    assert result is None


V1_RESULTS: dict[str, Callable[[Any], None]] = {
    "SendMessage": _pb(pb.SendMessageResponse()),
    "SendStreamingMessage": _pb(pb.StreamResponse()),
    "GetTask": _pb(pb.Task()),
    "ListTasks": _pb(pb.ListTasksResponse()),
    "CancelTask": _pb(pb.Task()),
    "SubscribeToTask": _pb(pb.StreamResponse()),
    "CreateTaskPushNotificationConfig": _pb(pb.TaskPushNotificationConfig()),
    "GetTaskPushNotificationConfig": _pb(pb.TaskPushNotificationConfig()),
    "ListTaskPushNotificationConfigs": _pb(pb.ListTaskPushNotificationConfigsResponse()),
    "DeleteTaskPushNotificationConfig": _v1_delete,
    "GetExtendedAgentCard": _pb(pb.AgentCard()),
}

V03_RESPONSES: dict[str, type[Any]] = {
    "message/send": t03.SendMessageSuccessResponse,
    "message/stream": t03.SendStreamingMessageSuccessResponse,
    "tasks/get": t03.GetTaskSuccessResponse,
    "tasks/cancel": t03.CancelTaskSuccessResponse,
    "tasks/resubscribe": t03.SendStreamingMessageSuccessResponse,
    f"{_PUSH}/set": t03.SetTaskPushNotificationConfigSuccessResponse,
    f"{_PUSH}/get": t03.GetTaskPushNotificationConfigSuccessResponse,
    f"{_PUSH}/list": t03.ListTaskPushNotificationConfigSuccessResponse,
    f"{_PUSH}/delete": t03.DeleteTaskPushNotificationConfigSuccessResponse,
    "agent/getAuthenticatedExtendedCard": t03.GetAuthenticatedExtendedCardSuccessResponse,
}


def check_success(method: str, body: Any, rpc_id: Any) -> None:
    assert set(body) == {"jsonrpc", "id", "result"}, body
    assert body["jsonrpc"] == "2.0"
    assert body["id"] == rpc_id
    assert type(body["id"]) is type(rpc_id)
    if method in V1_RESULTS:
        V1_RESULTS[method](body["result"])
        if method == "ListTasks":
            assert {"tasks", "nextPageToken", "pageSize", "totalSize"} <= set(body["result"]), body
    else:
        V03_RESPONSES[method].model_validate(body)


# --------------------------------------------------------------------------- one exchange


def exchange(r: Rig, raw: bytes, version: str | None) -> str:
    """Send ``raw`` and check the answer against the oracle; returns what happened (for stats)."""
    headers = {"A2A-Version": version} if version is not None else {}
    before = r.state()
    response = r.post(raw, headers)
    assert_no_leak(response)
    try:
        method, rpc_id, legacy = predict(raw, version)
    except Rejected as rejected:
        assert_rpc_error(response, rpc_id=rejected.rpc_id, codes=rejected.code, legacy=rejected.legacy)
        assert r.state() == before, "a rejected request changed the store"
        return f"rejected {rejected.code}"
    assert response.status_code == 200, response.text[:2000]
    if response.headers["content-type"].startswith("text/event-stream"):
        assert method in STREAMING, method
        events = sse_events(response)
        assert events, response.text[:2000]
        for event in events:
            if "error" in event:
                assert_rpc_error_body(event, rpc_id=rpc_id, codes=OPERATION_CODES, legacy=legacy)
            else:
                check_success(method, event, rpc_id)
        return "stream"
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    if "error" in body:
        assert_rpc_error_body(body, rpc_id=rpc_id, codes=OPERATION_CODES, legacy=legacy)
        # An operation may have asked for a conditional write the store refused (a reused
        # messageId is found by the create's condition, with no read first): nothing may be held
        # that was not held before.
        assert r.state()[1] == before[1], f"an error ({body['error']['code']}) changed the store"
        return f"error {body['error']['code']}"
    check_success(method, body, rpc_id)
    return "ok"


@pytest.fixture(scope="module")
def shared_rig() -> Iterator[Rig]:
    with rig() as value:
        yield value


# --------------------------------------------------------------------------- strategies

_SLEEP = re.compile(r"^\s*sleep\s", re.IGNORECASE)  # the demo agent would sleep for real
texts = st.text(max_size=24).filter(lambda t: not _SLEEP.match(t))
json_leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=16)
)
junk = st.recursive(
    json_leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def mostly(valid: st.SearchStrategy[Any], invalid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``valid`` three times in four (``one_of`` would weigh each of ``invalid``'s branches alike)."""
    return st.integers(min_value=0, max_value=3).flatmap(lambda k: invalid if k == 0 else valid)


ids = mostly(
    st.sampled_from(["{done}", "{waiting}", "{done}", "no-such-task"]),
    st.sampled_from(
        [
            "",
            "x" * 300,
            "\u0000",
            "caf\u00e9",
            "a#b/%2F",
            "\U0001f600" * 65,  # 65 characters, 260 bytes
            "1",
            " ",
        ]
    )
    | st.text(max_size=12),
)
names = mostly(st.text(min_size=1, max_size=12), ids)
urls = mostly(
    st.just(HOOK),
    st.sampled_from(
        [
            "https://127.0.0.1/h",
            "http://example.com/h",
            "hook",
            "",
            "https://[::1]/x",
            "https://example.com/" + "p" * 300,
        ]
    ),
)
metadata = st.none() | st.dictionaries(st.text(max_size=8), junk, max_size=3)
int32ish = st.integers(min_value=-3, max_value=120) | st.sampled_from([2**31 - 1, 2**31, -(2**31) - 1, 2**63, 10**30])


def _compact(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


@st.composite
def v1_parts(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text", "text", "raw", "url", "data"]))
    content: Any
    if kind == "text":
        content = draw(texts)
    elif kind == "raw":
        content = base64.b64encode(draw(st.binary(max_size=12))).decode()
    elif kind == "url":
        content = draw(urls)
    else:
        content = draw(junk)
    return _compact(
        **{kind: content},
        mediaType=draw(st.none() | st.sampled_from(["text/plain", "application/json", ""])),
        filename=draw(st.none() | texts),
        metadata=draw(metadata),
    )


@st.composite
def v1_messages(draw: st.DrawFn) -> dict[str, Any]:
    return _compact(
        messageId=draw(names),
        role=draw(st.sampled_from(["ROLE_USER", "ROLE_USER", "ROLE_AGENT"])),
        parts=draw(st.lists(v1_parts(), min_size=1, max_size=3)),
        contextId=draw(st.none() | st.sampled_from(["{waiting_ctx}", "{done_ctx}"]) | ids),
        taskId=draw(st.none() | st.none() | ids),
        metadata=draw(metadata),
        extensions=draw(st.none() | st.lists(texts, max_size=2)),
        referenceTaskIds=draw(st.none() | st.lists(ids, max_size=2)),
    )


push_configs = st.builds(
    lambda url, config_id, token, auth: _compact(url=url, id=config_id, token=token, authentication=auth),
    urls,
    st.none() | ids,
    st.none() | texts,
    st.none() | st.fixed_dictionaries({"scheme": st.sampled_from(["Bearer", ""])}, optional={"credentials": texts}),
)


@st.composite
def v1_send(draw: st.DrawFn) -> dict[str, Any]:
    configuration = draw(
        st.none()
        | st.fixed_dictionaries(
            {},
            optional={
                "acceptedOutputModes": st.lists(st.sampled_from(["text/plain", "application/json", "x"]), max_size=2),
                "historyLength": int32ish,
                "returnImmediately": st.booleans(),
                "taskPushNotificationConfig": push_configs,
            },
        )
    )
    return _compact(
        message=draw(v1_messages()),
        configuration=configuration,
        metadata=draw(metadata),
        tenant=draw(st.none() | st.sampled_from(["", "acme", "a/b", "v1"])),
    )


def _task_query(**extra: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"id": ids}, optional={"tenant": st.sampled_from(["", "acme"]), **extra})


V1_PARAMS: dict[str, st.SearchStrategy[Any]] = {
    "SendMessage": v1_send(),
    "SendStreamingMessage": v1_send(),
    "GetTask": _task_query(historyLength=int32ish),
    "ListTasks": st.fixed_dictionaries(
        {},
        optional={
            "contextId": st.sampled_from(["{done_ctx}", "{waiting_ctx}"]) | ids,
            "status": st.sampled_from(["TASK_STATE_COMPLETED", "TASK_STATE_INPUT_REQUIRED", "completed", "", 3, 99]),
            "pageSize": int32ish,
            "pageToken": st.sampled_from(["", "bm90LWEtdG9rZW4", "eyJwIjoieCIsImYiOiJ5In0"]) | texts,
            "historyLength": int32ish,
            "statusTimestampAfter": st.sampled_from(["2020-01-01T00:00:00Z", "yesterday", "9999-12-31T23:59:59Z"]),
            "includeArtifacts": st.booleans(),
        },
    ),
    "CancelTask": _task_query(metadata=metadata),
    "SubscribeToTask": _task_query(),
    "CreateTaskPushNotificationConfig": st.builds(lambda task, config: {"taskId": task, **config}, ids, push_configs),
    "GetTaskPushNotificationConfig": st.fixed_dictionaries({"taskId": ids, "id": ids}),
    "ListTaskPushNotificationConfigs": st.fixed_dictionaries(
        {"taskId": ids}, optional={"pageSize": int32ish, "pageToken": texts}
    ),
    "DeleteTaskPushNotificationConfig": st.fixed_dictionaries({"taskId": ids, "id": ids}),
    "GetExtendedAgentCard": st.fixed_dictionaries({}, optional={"tenant": st.sampled_from(["", "acme"])}),
}


@st.composite
def v03_parts(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text", "text", "data", "file-uri", "file-bytes"]))
    if kind == "text":
        return {"kind": "text", "text": draw(texts)}
    if kind == "data":
        return {"kind": "data", "data": draw(st.dictionaries(st.text(max_size=6), junk, max_size=3))}
    if kind == "file-uri":
        return {"kind": "file", "file": _compact(uri=draw(urls), mimeType=draw(st.none() | texts))}
    return {"kind": "file", "file": {"bytes": base64.b64encode(draw(st.binary(max_size=9))).decode()}}


@st.composite
def v03_send(draw: st.DrawFn) -> dict[str, Any]:
    message = _compact(
        kind="message",
        messageId=draw(names),
        role=draw(st.sampled_from(["user", "user", "agent"])),
        parts=draw(st.lists(v03_parts(), min_size=1, max_size=3)),
        contextId=draw(st.none() | st.sampled_from(["{waiting_ctx}"]) | ids),
        taskId=draw(st.none() | st.none() | ids),
        metadata=draw(metadata),
    )
    configuration = draw(
        st.none()
        | st.fixed_dictionaries(
            {},
            optional={
                "blocking": st.booleans(),
                "historyLength": int32ish,
                "acceptedOutputModes": st.lists(st.sampled_from(["text/plain", "x"]), max_size=2),
                "pushNotificationConfig": push_configs,
            },
        )
    )
    return _compact(message=message, configuration=configuration, metadata=draw(metadata))


def _v03_push_config(config: dict[str, Any]) -> dict[str, Any]:
    auth = config.pop("authentication", None)
    if auth is not None:
        config["authentication"] = {
            "schemes": [auth["scheme"]],
            **({"credentials": auth["credentials"]} if "credentials" in auth else {}),
        }
    return config


V03_PARAMS: dict[str, st.SearchStrategy[Any]] = {
    "message/send": v03_send(),
    "message/stream": v03_send(),
    "tasks/get": st.fixed_dictionaries({"id": ids}, optional={"historyLength": int32ish, "metadata": metadata}),
    "tasks/cancel": st.fixed_dictionaries({"id": ids}, optional={"metadata": metadata}),
    "tasks/resubscribe": st.fixed_dictionaries({"id": ids}),
    f"{_PUSH}/set": st.builds(
        lambda task, config: {"taskId": task, "pushNotificationConfig": _v03_push_config(config)}, ids, push_configs
    ),
    f"{_PUSH}/get": st.fixed_dictionaries({"id": ids}, optional={"pushNotificationConfigId": ids}),
    f"{_PUSH}/list": st.fixed_dictionaries({"id": ids}),
    f"{_PUSH}/delete": st.fixed_dictionaries({"id": ids, "pushNotificationConfigId": ids}),
    "agent/getAuthenticatedExtendedCard": st.just({}),
}


MUTANTS = st.one_of(
    junk,
    st.sampled_from(
        [
            None,
            "",
            -1,
            -(2**31) - 1,
            2**31,
            2**64,
            10**40,
            1.5,
            -0.0,
            1e308,
            True,
            [],
            {},
            "ROLE_UNSPECIFIED",
            "TASK_STATE_UNSPECIFIED",
            "role_user",
            "x" * 300,
            "\U0001f600" * 70,
            "\u0000\u0001",
            "\ufeff",
            "\ufffe\uffff",
        ]
    ),
)


@st.composite
def mutated(draw: st.DrawFn, valid: st.SearchStrategy[Any]) -> Any:
    """A schema-following value with one node replaced, removed, or given an unknown sibling."""
    value = copy.deepcopy(draw(valid))
    path = draw(st.sampled_from(node_paths(value)[1:] or [()]))  # the root is replaced by params_for's junk
    if not path:
        return draw(MUTANTS)
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    action = draw(st.sampled_from(["replace", "replace", "delete", "extra"]))
    if action == "delete" and isinstance(parent, dict):
        del parent[path[-1]]
    elif action == "extra" and isinstance(parent, dict):
        parent[draw(st.sampled_from(["unknownField", "kind", "__proto__", "@type", "id"]))] = draw(MUTANTS)
    else:
        parent[path[-1]] = draw(MUTANTS)
    return value


def params_for(table: dict[str, st.SearchStrategy[Any]], method: str) -> st.SearchStrategy[Any]:
    valid = table[method]
    return st.integers(min_value=0, max_value=9).flatmap(
        lambda k: junk if k == 0 else valid if k <= 3 else mutated(valid)
    )


rpc_ids = st.one_of(
    st.integers(min_value=-(2**31), max_value=2**31),
    st.integers(min_value=-(10**60), max_value=10**60),
    st.text(max_size=12),
    st.sampled_from([0, -1, "", "\u0000", "\U0001f600", 2**63, -(2**64), 10**100]),
)
invalid_ids = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.lists(junk, max_size=2),
    st.dictionaries(st.text(max_size=4), junk, max_size=2),
    st.sampled_from([1.0, 0.5, 1e300, [1], {"id": 1}, {"": {"": []}}]),
)


def envelope(method: str, params: Any, rpc_id: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}).encode()


# --------------------------------------------------------------------------- the properties


@fuzz(2000)
@given(data=st.data(), method=st.sampled_from(V1_METHODS), rpc_id=rpc_ids)
def test_v1_methods_with_generated_params(shared_rig: Rig, data: st.DataObject, method: str, rpc_id: Any) -> None:
    params = shared_rig.fill(data.draw(params_for(V1_PARAMS, method), label="params"))
    event(exchange(shared_rig, envelope(method, params, rpc_id), "1.0"))


@fuzz(1200)
@given(data=st.data(), method=st.sampled_from(V03_METHODS), rpc_id=rpc_ids)
def test_v03_methods_with_generated_params(shared_rig: Rig, data: st.DataObject, method: str, rpc_id: Any) -> None:
    params = shared_rig.fill(data.draw(params_for(V03_PARAMS, method), label="params"))
    event(exchange(shared_rig, envelope(method, params, rpc_id), None))


_ABSENT = object()


@fuzz(1500)
@given(
    jsonrpc=mostly(st.just("2.0"), st.sampled_from(["1.0", "2", 2.0, 2, None, "", " 2.0", _ABSENT]) | junk),
    rpc_id=mostly(rpc_ids, invalid_ids | st.sampled_from([None, _ABSENT])),
    method=mostly(
        st.sampled_from(V1_METHODS + V03_METHODS), st.sampled_from(UNKNOWN_METHODS) | junk | st.just(_ABSENT)
    ),
    params=mostly(
        st.dictionaries(st.sampled_from(["id", "taskId", "message", "tenant"]), junk), junk | st.just(_ABSENT)
    ),
    version=st.sampled_from([None, None, "1.0", "1.0", "0.3", "1.0.7", "", "2.0", "1.1", "1", "0.2", "junk"]),
    extra=st.dictionaries(st.sampled_from(["extra", "result", "error", "jsonrpc2"]), junk, max_size=2),
)
def test_any_envelope(
    shared_rig: Rig, jsonrpc: Any, rpc_id: Any, method: Any, params: Any, version: str | None, extra: dict[str, Any]
) -> None:
    fields = {"jsonrpc": jsonrpc, "id": rpc_id, "method": method, "params": params}
    body = {**extra, **{k: v for k, v in fields.items() if v is not _ABSENT}}
    event(exchange(shared_rig, json.dumps(body).encode(), version))


def _valid_call() -> st.SearchStrategy[bytes]:
    return st.sampled_from(
        [
            b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "no-such-task"}}',
            b'{"jsonrpc": "2.0", "id": "a", "method": "ListTasks", "params": {"pageSize": 1}}',
            b'{"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": "no-such-task"}}',
            b'{"jsonrpc": "2.0", "id": 3, "method": "SendMessage", "params": {"message": {"messageId": "raw-m",'
            b' "role": "ROLE_USER", "parts": [{"text": "hi"}]}}}',
        ]
    )


@st.composite
def raw_bodies(draw: st.DrawFn) -> bytes:
    valid = draw(_valid_call())
    kind = draw(
        st.sampled_from(
            ["bytes", "truncated", "bom", "utf16", "constant", "duplicate", "nested", "batch", "surrogate", "number"]
        )
    )
    if kind == "bytes":
        return draw(st.binary(max_size=48))
    if kind == "truncated":
        return valid[: draw(st.integers(min_value=0, max_value=len(valid) - 1))]
    if kind == "bom":
        return draw(st.sampled_from([b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"])) + valid
    if kind == "utf16":
        return valid.decode().encode(draw(st.sampled_from(["utf-16", "utf-16-le", "utf-32"])))
    if kind == "constant":
        literal = draw(st.sampled_from([b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1e999", b"9" * 4400]))
        return draw(
            st.sampled_from(
                [
                    b'{"jsonrpc": "2.0", "id": ' + literal + b', "method": "GetTask", "params": {"id": "x"}}',
                    b'{"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"historyLength": '
                    + literal
                    + b"}}",
                    b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x", "m": [' + literal + b"]}}",
                ]
            )
        )
    if kind == "duplicate":
        key = draw(st.sampled_from([b"id", b"jsonrpc", b"method", b"params"]))
        value = draw(st.sampled_from([b'"x"', b"1", b"null", b"{}", b"[]", b'"1.0"', b'"GetTask"', b"true"]))
        position = draw(st.booleans())
        dup = b'"' + key + b'": ' + value
        return b"{" + dup + b", " + valid[1:] if position else valid[:-1] + b", " + dup + b"}"
    if kind == "nested":
        depth = draw(st.sampled_from([1, 50, 97, 98, 99, 100, 101, 102, 150, 999, 5000, 100_000]))
        where = draw(st.sampled_from(["top", "params", "id"]))
        nest = b"[" * depth + b"]" * depth
        if where == "top":
            return nest
        if where == "id":
            return valid.replace(b'"id": ', b'"id": ' + nest + b', "x": ', 1)
        return valid.replace(b'"params": {', b'"params": {"deep": ' + nest + b", ", 1)
    if kind == "batch":
        count = draw(st.integers(min_value=0, max_value=3))
        return b"[" + b", ".join([valid] * count) + b"]"
    if kind == "surrogate":
        escape = draw(st.sampled_from([b"\\ud800", b"\\udfff", b"\\uDBFF\\u0041", b"\\ude00\\ud83d"]))
        return valid.replace(b'"no-such-task"', b'"' + escape + b'"').replace(b'"hi"', b'"' + escape + b'"')
    return draw(st.sampled_from([b"0", b"-1", b"1.5", b"true", b"null", b'""', b"{}", b" ", b"\t\n"]))


@fuzz(900)
@given(raw=raw_bodies(), version=st.sampled_from([None, "1.0"]))
def test_raw_bodies(shared_rig: Rig, raw: bytes, version: str | None) -> None:
    event(exchange(shared_rig, raw, version))


# --------------------------------------------------------------------------- the oracle's own cases


@pytest.mark.parametrize(
    ("raw", "version", "expected"),
    [
        pytest.param(b"[" * 101 + b"]" * 101, "1.0", PARSE_ERROR, id="depth-101"),
        pytest.param(b"[" * 100 + b"]" * 100, "1.0", INVALID_REQUEST, id="depth-100-is-a-batch"),
        pytest.param(b"\xef\xbb\xbf{}", None, PARSE_ERROR, id="bom"),
        pytest.param(b'{"jsonrpc": "2.0", "id": 1.0, "method": "GetTask"}', "1.0", INVALID_REQUEST, id="float-id"),
        pytest.param(b'{"jsonrpc": "2.0", "method": "GetTask"}', "1.0", INVALID_REQUEST, id="notification"),
        pytest.param(b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask"}', None, VERSION_NOT_SUPPORTED, id="no-version"),
        pytest.param(b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/get"}', "1.0", METHOD_NOT_FOUND, id="v03-as-v1"),
    ],
)
def test_oracle_agrees_with_the_digest(raw: bytes, version: str | None, expected: int) -> None:
    with pytest.raises(Rejected) as rejected:
        predict(raw, version)
    assert rejected.value.code == expected


def test_a_deep_data_part_is_a_parse_error_not_an_internal_error(shared_rig: Rig) -> None:
    """Regression: a ``data`` part nested 300 deep parsed, then failed as the task was stored
    (pydantic serializes at most ~255 levels): -32603, and HTTP 500 over REST."""
    deep = json.loads("[" * 300 + "]" * 300)
    params = {"message": {"messageId": "m-deep", "role": "ROLE_USER", "parts": [{"data": deep}]}}
    before = shared_rig.state()
    response = shared_rig.post(envelope("SendMessage", params, "deep"), V1)
    assert_rpc_error(response, rpc_id=None, codes=PARSE_ERROR, legacy=False)
    rest = shared_rig.post(json.dumps(params).encode(), V1, path="/message:send")
    assert_no_leak(rest)
    assert rest.status_code == 400, rest.text
    assert shared_rig.state() == before
    # As deep as the limit allows is stored and read back as sent.
    ok_data = json.loads("[" * 95 + "]" * 95)
    params["message"] = {**params["message"], "messageId": "m-deep-ok", "parts": [{"data": ok_data}]}
    ok = shared_rig.post(envelope("SendMessage", params, 1), V1)
    assert ok.json()["result"]["task"]["history"][0]["parts"][0]["data"] == ok_data
