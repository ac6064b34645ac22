"""Property-based fuzzing of the REST binding: schemathesis over the generated OpenAPI document.

Every operation of ``openapi_document()`` (each route and its ``/{tenant}`` form) is driven with
schema-conforming (positive) and schema-violating (negative) requests, in process, against a memory
runtime seeded with real tasks: a COMPLETED one with a push config, an INPUT_REQUIRED one, and a
task in the tenant ``acme``. Path parameters and ``message.taskId`` hit those ids part of the time.
Each case must get:

* never a 5xx, and never Python internals in the body (``LEAK_MARKERS`` that the request did not
  carry itself);
* a success body that conforms to the document's response schema (every SSE event's data a
  ``StreamResponse``, or an in-stream error in the REST error shape);
* or the REST error shape (A2A specification, section 11.6 Error Handling): ``{"error": {code, status, message,
  details}}``, ``code`` the HTTP status, ``status`` the gRPC name that goes with it, ErrorInfo first with a reason whose
  mapping is the spec's (A2A specification, section 5.4), string-only metadata;
* and, when rejected (4xx), a store that saw no write and holds exactly what it held before
  (background work settled before and after, so a rejected request that queued work is caught).

The whole run is deterministic (``derandomize``). The second pass authenticates as ``bob`` against
seeds owned by ``alice``: her ids must be invisible to him, and nothing he sends may change them.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from concurrent.futures import wait
from dataclasses import dataclass, field
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from schemathesis import GenerationMode
from schemathesis.python import asgi

from a2a_serverless.config import Settings
from a2a_serverless.runtime import Runtime
from a2a_serverless.transport.app import create_app
from a2a_serverless.transport.openapi import openapi_document
from a2a_serverless.wiring import build_runtime
from testkit.stores import LEAK_MARKERS, SpyStore

# Cases per (operation, generation mode): 18 paths' 24 operations, both modes. The anonymous pass
# carries the weight; the second principal's pass is a lighter sweep of the same operations.
# REST_FUZZ_SCALE=10 digs ten times deeper (locally; CI runs the default).
_SCALE = float(os.environ.get("REST_FUZZ_SCALE", "1"))
EXAMPLES = {"anonymous": round(50 * _SCALE), "bob": round(12 * _SCALE)}

V1 = {"A2A-Version": "1.0"}
ALICE = {**V1, "Authorization": "Bearer key-a"}
BOB_AUTH = {"Authorization": "Bearer key-b"}
API_KEYS = {"key-a": "alice", "key-b": "bob"}
HOOK = "https://example.com/hook"
TENANT = "acme"
REST_MEDIA_TYPE = "application/a2a+json"
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
DOMAIN = "a2a-protocol.org"
SEEDS = ("done", "waiting")
# A hang guard between bytes of a streamed answer, not a budget (0.5 s failed under load).
STREAM_READ_SECONDS = 10.0


# The gRPC names an HTTP status may carry (google.rpc.Code's HTTP mapping; 405 is UNIMPLEMENTED,
# as grpc-gateway answers a known path with another verb).
GRPC_FOR_HTTP = {
    400: {"INVALID_ARGUMENT", "FAILED_PRECONDITION", "OUT_OF_RANGE"},
    401: {"UNAUTHENTICATED"},
    403: {"PERMISSION_DENIED"},
    404: {"NOT_FOUND"},
    405: {"UNIMPLEMENTED"},
    409: {"ABORTED", "ALREADY_EXISTS"},
    413: {"INVALID_ARGUMENT", "RESOURCE_EXHAUSTED"},
    429: {"RESOURCE_EXHAUSTED"},
}

# ErrorInfo reason -> (HTTP status, gRPC name), from the spec's tables (A2A specification, section 5.4 Error Code
# Mappings), not the product.
SPEC_ERRORS = {
    "TASK_NOT_FOUND": {(404, "NOT_FOUND")},
    "TASK_NOT_CANCELABLE": {(400, "FAILED_PRECONDITION")},
    "PUSH_NOTIFICATION_NOT_SUPPORTED": {(400, "FAILED_PRECONDITION")},
    "UNSUPPORTED_OPERATION": {(400, "FAILED_PRECONDITION")},
    "CONTENT_TYPE_NOT_SUPPORTED": {(400, "INVALID_ARGUMENT")},
    "EXTENDED_AGENT_CARD_NOT_CONFIGURED": {(400, "FAILED_PRECONDITION")},
    "EXTENSION_SUPPORT_REQUIRED": {(400, "FAILED_PRECONDITION")},
    "VERSION_NOT_SUPPORTED": {(400, "FAILED_PRECONDITION")},
    "INVALID_REQUEST": {(400, "INVALID_ARGUMENT")},
    "INVALID_PARAMS": {(400, "INVALID_ARGUMENT")},
    "METHOD_NOT_FOUND": {(404, "NOT_FOUND"), (405, "UNIMPLEMENTED")},
    "UNAUTHENTICATED": {(401, "UNAUTHENTICATED")},
    "PAYLOAD_TOO_LARGE": {(413, "INVALID_ARGUMENT")},
}

DOCUMENT = openapi_document()
SCHEMA = schemathesis.openapi.from_dict(DOCUMENT)
OPERATIONS = {op.label: op for op in (result.ok() for result in SCHEMA.get_all_operations())}
_DOC_URI = "urn:a2a-serverless:openapi"
_REGISTRY: Registry[Any] = Registry().with_resource(_DOC_URI, Resource(contents=DOCUMENT, specification=DRAFT202012))


def _validator(ref: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": _DOC_URI + ref}, registry=_REGISTRY)


ERROR_SCHEMA = _validator("#/components/schemas/Error")
STREAM_EVENT_SCHEMA = _validator("#/components/schemas/StreamResponse")


def _success_validator(label: str) -> Draft202012Validator | None:
    verb, path = label.split(" ", 1)
    content = DOCUMENT["paths"][path][verb.lower()]["responses"]["200"]["content"]
    if REST_MEDIA_TYPE not in content:
        return None  # an event stream: each event is checked on its own
    schema = content[REST_MEDIA_TYPE]["schema"]
    return Draft202012Validator({"allOf": [_resolve_refs(schema)]}, registry=_REGISTRY)


def _resolve_refs(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: (_DOC_URI + v if k == "$ref" else v) for k, v in schema.items()}


SUCCESS_SCHEMAS = {label: _success_validator(label) for label in OPERATIONS}


# --------------------------------------------------------------------------- the world under fuzz


@dataclass
class World:
    runtime: Runtime
    store: SpyStore
    client: asgi.ASGIClient
    principal: str
    seed_headers: dict[str, str]
    call_headers: dict[str, str]
    ids: dict[tuple[str, str], str] = field(default_factory=dict)
    """(tenant, seed name) -> task id; ``(tenant, "config")`` -> the push config's id."""
    statuses: dict[tuple[str, int], int] = field(default_factory=dict)
    """(operation, HTTP status) -> how many cases got it."""

    def settle(self) -> None:
        """Wait for the background work already queued (the inline queue's worker threads)."""
        wait(list(self.runtime.queue.futures))  # type: ignore[attr-defined]

    def send(self, tenant: str, text: str, message_id: str) -> str:
        prefix = f"/{tenant}" if tenant else ""
        body = {"message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}}
        response = self.client.post(prefix + "/message:send", json=body, headers=self.seed_headers)
        assert response.status_code == 200, response.text
        task_id: str = response.json()["task"]["id"]
        return task_id

    def seed(self) -> None:
        """(Re)create the seeds a previous accepted case used up: the waiting task answered or
        canceled, the push config deleted."""
        generation = len(self.ids)
        for tenant in ("", TENANT):
            if not self._task_is(tenant, "done", "TASK_STATE_COMPLETED"):
                self.ids[tenant, "done"] = self.send(tenant, "hello", f"seed-done-{generation}")
            if not self._task_is(tenant, "waiting", "TASK_STATE_INPUT_REQUIRED"):
                self.ids[tenant, "waiting"] = self.send(tenant, "ask me", f"seed-waiting-{generation}")
            prefix = f"/{tenant}" if tenant else ""
            configs = f"{prefix}/tasks/{self.ids[tenant, 'done']}/pushNotificationConfigs"
            listed = self.client.get(configs, headers=self.seed_headers).json().get("configs", [])
            if not any(c["id"] == self.ids.get((tenant, "config")) for c in listed):
                created = self.client.post(configs, json={"url": HOOK}, headers=self.seed_headers)
                assert created.status_code == 200, created.text
                self.ids[tenant, "config"] = created.json()["id"]
        self.settle()

    def _task_is(self, tenant: str, name: str, state: str) -> bool:
        task_id = self.ids.get((tenant, name))
        if task_id is None:
            return False
        prefix = f"/{tenant}" if tenant else ""
        response = self.client.get(f"{prefix}/tasks/{task_id}", headers=self.seed_headers)
        return response.status_code == 200 and response.json()["status"]["state"] == state


@pytest.fixture(scope="module", params=list(EXAMPLES))
def world(request: pytest.FixtureRequest) -> Iterator[World]:
    principal: str = request.param
    store = SpyStore()
    overrides: dict[str, Any] = {"auth_mode": "api-key", "api_keys": API_KEYS} if principal == "bob" else {}
    # A subscription to an unfinished task stays open (A2A specification, section 3.1.6) until the stream's time is up:
    # one second here, so the server ends it cleanly and the read timeout stays a hang guard.
    settings = Settings(store="memory", poll_interval_seconds=0.005, stream_max_seconds=1.0, **overrides)
    runtime = build_runtime(settings, store=store)
    client = asgi.get_client(create_app(runtime))
    try:
        with client:
            seed_headers = ALICE if principal == "bob" else V1
            call_headers = BOB_AUTH if principal == "bob" else {}
            fuzz = World(runtime, store, client, principal, seed_headers=seed_headers, call_headers=call_headers)
            fuzz.seed()
            yield fuzz
    finally:
        runtime.queue.shutdown()  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- aiming at real ids


@dataclass(frozen=True)
class Aim:
    """Which path values (and ``message.taskId``) to replace with seeded ids; None keeps the
    generated value."""

    tenant: bool
    task: str | None
    config: bool
    message_task: str | None


AIMS = st.builds(
    Aim,
    tenant=st.booleans(),
    task=st.sampled_from([None, *SEEDS]),
    config=st.booleans(),
    message_task=st.sampled_from([None, None, *SEEDS]),
)


def aim(case: Any, world: World, target: Aim) -> None:
    params = case.path_parameters
    if params is None:
        return
    if params.get("tenant") == "v1":
        # /v1/... is the v0.3 REST binding (transport/v03.py; "v1" is never a tenant), whose errors
        # have the v0.3 shape (tests/transport/test_v03_rest_errors.py): not this operation.
        params["tenant"] = "v2"
    tenant = TENANT if target.tenant and "tenant" in params else params.get("tenant", "")
    if "tenant" in params and target.tenant:
        params["tenant"] = TENANT
    known = tenant in ("", TENANT)
    task_key = "task_id" if "task_id" in params else "id"
    if target.task is not None and task_key in params and known:
        params[task_key] = world.ids[tenant, target.task]
    if target.config and "task_id" in params and "id" in params and known:
        params["task_id"] = world.ids[tenant, "done"]
        params["id"] = world.ids[tenant, "config"]
    body = case.body
    if target.config and isinstance(body, dict) and "url" in body:
        body["url"] = HOOK  # a webhook the config checks accept, so some creates succeed
    if target.message_task is not None and known and isinstance(body, dict) and isinstance(body.get("message"), dict):
        body["message"]["taskId"] = world.ids[tenant, target.message_task]


# --------------------------------------------------------------------------- what every answer must be


def request_text(case: Any) -> str:
    return json.dumps(
        [
            case.path_parameters,
            case.query,
            case.headers,
            case.body if isinstance(case.body, (dict, list, str)) else None,
        ],
        default=repr,
        ensure_ascii=False,
    )


def header(response: schemathesis.Response, name: str) -> str:
    return ", ".join(v for k, values in response.headers.items() if k.lower() == name for v in values)


def assert_no_leak(response: schemathesis.Response, case: Any) -> None:
    assert response.status_code < 500, response.text
    sent = request_text(case)
    for marker in LEAK_MARKERS:
        assert marker not in response.text or marker in sent, f"{marker!r} leaked: {response.text}"


def assert_error_body(body: Any, status: int) -> None:
    errors = sorted(ERROR_SCHEMA.iter_errors(body), key=str)
    assert not errors, f"not the REST error shape: {errors[0].message}: {body}"
    assert set(body) == {"error"}, body
    error = body["error"]
    assert set(error) == {"code", "status", "message", "details"}, error
    assert error["code"] == status, error
    assert error["status"] in GRPC_FOR_HTTP.get(status, set()), error
    info = error["details"][0]
    assert info["@type"] == ERROR_INFO
    assert info["domain"] == DOMAIN
    assert all(isinstance(v, str) for v in info.get("metadata", {}).values()), info
    assert (status, error["status"]) in SPEC_ERRORS.get(info["reason"], set()), error


_SSE_FIELD = re.compile(r"^(id|event|data|retry)(?::[ ]?(.*))?$")


def sse_events(text: str) -> list[dict[str, str]]:
    events, current = [], {}
    for line in text.splitlines():
        if not line:
            if current:
                events.append(current)
            current = {}
            continue
        if line.startswith(":"):
            continue
        match = _SSE_FIELD.match(line)
        assert match is not None, f"not an SSE line: {line!r}"
        current[match.group(1)] = current.get(match.group(1), "") + (match.group(2) or "")
    if current:
        events.append(current)
    return events


def assert_success(response: schemathesis.Response, label: str, resuming: bool) -> None:
    content_type = header(response, "content-type")
    validator = SUCCESS_SCHEMAS[label]
    if validator is None:
        assert content_type.startswith("text/event-stream"), content_type
        events = sse_events(response.text)
        # Resuming after the last event of a finished task (Last-Event-ID) may leave nothing to send.
        assert events or resuming, "an accepted stream sends at least one event"
        for event in events:
            data = json.loads(event["data"])
            if event.get("event") == "error":
                assert_error_body(data, data.get("error", {}).get("code"))
                continue
            errors = sorted(STREAM_EVENT_SCHEMA.iter_errors(data), key=str)
            assert not errors, f"not a StreamResponse: {errors[0].message}: {data}"
        return
    assert content_type.startswith(REST_MEDIA_TYPE), content_type
    body = response.json()
    errors = sorted(validator.iter_errors(body), key=str)
    assert not errors, f"{label}: response does not match the document: {errors[0].message}: {body}"


def check(world: World, label: str, case: Any) -> None:
    world.settle()
    writes, contents = world.store.writes, world.store.contents()
    # A copy: the transport adds its defaults to the dict it is given.
    # A subscription to an unfinished task stays open until the stream's time is up (the world's
    # stream_max_seconds); the read timeout is a hang guard.
    timeout = STREAM_READ_SECONDS if SUCCESS_SCHEMAS[label] is None else 15
    response = case.call(session=world.client, headers=dict(world.call_headers) or None, timeout=timeout)
    note(f"-> {response.status_code} {response.text[:2000]}")
    key = (label, response.status_code)
    world.statuses[key] = world.statuses.get(key, 0) + 1
    assert_no_leak(response, case)
    if response.status_code < 300:
        assert response.status_code == 200, response.text
        assert_success(response, label, resuming="Last-Event-ID" in (case.headers or {}))
        if case.method != "GET":
            world.seed()
        return
    assert 400 <= response.status_code < 500, response.text
    assert header(response, "content-type").startswith(REST_MEDIA_TYPE), response.headers
    assert_error_body(response.json(), response.status_code)
    world.settle()
    assert world.store.writes == writes, f"a rejected request wrote to the store: {response.text}"
    assert world.store.contents() == contents, f"a rejected request changed the store: {response.text}"


# --------------------------------------------------------------------------- the runs


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=lambda m: m.value)
@pytest.mark.parametrize("label", list(OPERATIONS))
def test_rest_operation_under_fuzz(world: World, label: str, mode: GenerationMode) -> None:
    operation = OPERATIONS[label]

    @given(case=operation.as_strategy(generation_mode=mode), target=AIMS)
    @settings(
        max_examples=EXAMPLES[world.principal],
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    def fuzz(case: Any, target: Aim) -> None:
        aim(case, world, target)
        try:
            check(world, label, case)
        except BaseException:
            note(case.as_curl_command(headers=dict(world.call_headers) or None))
            raise

    fuzz()


def test_the_document_is_fuzzed_whole() -> None:
    """Every operation of the document is one of the fuzzed ones, both bindings' tenant forms too."""
    described = {f"{verb.upper()} {path}" for path, item in DOCUMENT["paths"].items() for verb in item}
    assert set(OPERATIONS) == described
    assert sum(EXAMPLES.values()) * 2 * len(OPERATIONS) >= 2500
