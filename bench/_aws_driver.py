"""What ``aws_calls.py`` drives on the local stack: every A2A method, and the task shapes.

:class:`Driver` speaks A2A over HTTP to the local stack and waits for its quiet between windows;
:func:`run_sample` drives every A2A 1.0 method once, each request labelled; the stream shapes
(``stream_<N>_<burst|paced>``) and the large-part shapes (``artifact_<N>mb``) run one task each and
report its outcome. :func:`run_stack` starts the local stack in this process with the recorder
installed and returns the raw records that :mod:`_aws_analysis` turns into figures.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from _aws_recorder import HEADERS, LABEL_HEADER, Activity, LabelMiddleware, Recorder, wrap_handlers
from _aws_units import BENCH, REGION, ROOT


class Driver:
    def __init__(self, base: str, recorder: Recorder, activity: Activity, receiver: Any) -> None:
        import httpx

        self.http = httpx.Client(base_url=base, timeout=60, headers=HEADERS)
        self.recorder = recorder
        self.activity = activity
        self.receiver = receiver
        self._sqs: Any = None
        self.quiet_seconds = 0.5
        """No invocation or request for this long: the window's work is done (stream polls: 50 ms)."""
        self.seconds: defaultdict[str, list[float]] = defaultdict(list)

    def close(self) -> None:
        self.http.close()

    @contextlib.contextmanager
    def window(self, name: str) -> Iterator[None]:
        if not self.activity.quiet(self.quiet_seconds):
            raise RuntimeError(f"the stack did not go quiet before window {name}")
        self.recorder.window = self.activity.window = name
        started = time.monotonic()
        try:
            yield
        finally:
            quiet = self.activity.quiet(self.quiet_seconds)
            self.seconds[name].append(round(time.monotonic() - started, 2))
            self.recorder.window = self.activity.window = "between"
            if not quiet:
                raise RuntimeError(f"the stack did not go quiet after window {name}")

    def call(self, label: str, verb: str, path: str, **kwargs: Any) -> Any:
        response = self.http.request(verb, path, headers={LABEL_HEADER: label}, **kwargs)
        response.raise_for_status()
        return response.json() if response.content else None

    def stream(self, label: str, path: str, body: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        events = []
        kwargs: dict[str, Any] = {"headers": {LABEL_HEADER: label, "Accept": "text/event-stream"}}
        if body is not None:
            kwargs["json"] = body
        with self.http.stream("POST", path, **kwargs) as response:
            response.raise_for_status()
            for line in response.iter_lines():
                if line.startswith("data:"):
                    events.append(json.loads(line[5:]))
        return events

    def send(
        self, tenant: str, text: str, *, label: str, immediately: bool = False, hook: str | None = None
    ) -> dict[str, Any]:
        configuration: dict[str, Any] = {"returnImmediately": immediately}
        if hook:
            configuration["taskPushNotificationConfig"] = {"url": hook}
        body = {"message": _message(text), "configuration": configuration}
        task: dict[str, Any] = self.call(label, "POST", f"{tenant}/message:send", json=body)["task"]
        return task

    def wait_state(self, tenant: str, task_id: str, states: set[str], timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            task: dict[str, Any] = self.call("GetTask", "GET", f"{tenant}/tasks/{task_id}")
            if task["status"]["state"] in states:
                return task
            if time.monotonic() > deadline:
                raise RuntimeError(f"task {task_id} stayed {task['status']['state']}, wanted {states}")
            time.sleep(0.05)

    def download(self, url: str, label: str) -> bytes:
        """GET ``url`` (a presigned S3 URL) as a client would: a plain HTTP client, none of the
        agent's headers; recorded as one S3 GET by the client."""
        import httpx

        with httpx.Client(timeout=120) as plain:
            response = plain.get(url)
        self.recorder.note_download(label, len(response.content), response.status_code)
        response.raise_for_status()
        return response.content

    def dead_letter(self, task_id: str) -> None:
        """Put a copy of the task's work item on the work dead-letter queue, as SQS does after
        maxReceiveCount failed receives (with a client of its own session: not counted)."""
        import boto3

        if self._sqs is None:
            self._sqs = boto3.session.Session(region_name=REGION).client(
                "sqs", endpoint_url=os.environ["AWS_ENDPOINT_URL"]
            )
        urls = self._sqs.list_queues().get("QueueUrls", [])
        url = next(u for u in urls if "WorkDeadLetterQueue" in u)
        item = self.recorder.work_items[task_id]
        self._sqs.send_message(
            QueueUrl=url,
            MessageBody=item["MessageBody"],
            MessageGroupId=item["MessageGroupId"],
            MessageDeduplicationId=uuid.uuid4().hex,
        )


def _message(text: str) -> dict[str, Any]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}


TERMINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_CANCELED", "TASK_STATE_FAILED", "TASK_STATE_REJECTED"}
COMPLETED = "TASK_STATE_COMPLETED"


def run_sample(d: Driver, n: int, notes: dict[str, Any], *, light: bool = False) -> None:
    """One pass over every method and task shape, in windows; tenant ``s<n>`` keeps ListTasks'
    scope to this sample's tasks. ``light``: the two task shapes only (a quick warm-up)."""
    tenant = f"/s{n}"
    with d.window("hello_blocking"):
        hello = d.send(tenant, "hello", label="SendMessage (blocking)")
        assert hello["status"]["state"] == COMPLETED, hello
        d.call("GetTask", "GET", f"{tenant}/tasks/{hello['id']}")
    with d.window("hello_push"):
        path = f"/push{n}"
        pushed = d.send(tenant, "hello", label="SendMessage (blocking, inline push config)", hook=d.receiver.url + path)
        if not d.receiver.wait_completed({path}, timeout=30):
            raise RuntimeError("no COMPLETED push notification")
        d.call("GetTask", "GET", f"{tenant}/tasks/{pushed['id']}")
    notes.setdefault("notifications", []).append(len(d.receiver.for_path(path)))
    if light:
        return
    with d.window("hello_return_immediately"):
        task = d.send(tenant, "hello", label="SendMessage (returnImmediately)", immediately=True)
        d.wait_state(tenant, task["id"], TERMINAL)
    with d.window("hello_streaming"):
        events = d.stream("SendStreamingMessage", f"{tenant}/message:stream", {"message": _message("hello")})
        notes.setdefault("stream_events", []).append(len(events))
    with d.window("list_tasks"):
        d.call("ListTasks", "GET", f"{tenant}/tasks")
        d.call("ListTasks (status filter)", "GET", f"{tenant}/tasks", params={"status": "TASK_STATE_COMPLETED"})
    with d.window("push_config_methods"):
        base = f"{tenant}/tasks/{hello['id']}/pushNotificationConfigs"
        created = d.call("CreateTaskPushNotificationConfig", "POST", base, json={"url": d.receiver.url + f"/cfg{n}"})
        d.call("GetTaskPushNotificationConfig", "GET", f"{base}/{created['id']}")
        d.call("ListTaskPushNotificationConfigs", "GET", base)
        d.call("DeleteTaskPushNotificationConfig", "DELETE", f"{base}/{created['id']}")
    with d.window("cancel"):
        task = d.send(tenant, "sleep 30", label="SendMessage (returnImmediately)", immediately=True)
        d.wait_state(tenant, task["id"], {"TASK_STATE_WORKING"})
        d.call("CancelTask", "POST", f"{tenant}/tasks/{task['id']}:cancel")
        d.wait_state(tenant, task["id"], {"TASK_STATE_CANCELED"})
    with d.window("subscribe"):
        task = d.send(tenant, "sleep 1", label="SendMessage (returnImmediately)", immediately=True)
        started = time.monotonic()
        d.stream("SubscribeToTask", f"{tenant}/tasks/{task['id']}:subscribe")
        notes.setdefault("subscribe_seconds", []).append(round(time.monotonic() - started, 2))
    with d.window("extended_card"):
        d.call("GetExtendedAgentCard", "GET", f"{tenant}/extendedAgentCard")
    with d.window("dead_letter"):
        task = d.send(tenant, "sleep 3", label="SendMessage (returnImmediately)", immediately=True)
        d.wait_state(tenant, task["id"], {"TASK_STATE_WORKING"})
        d.dead_letter(task["id"])
        failed = d.wait_state(tenant, task["id"], TERMINAL)
        notes.setdefault("dead_letter_states", []).append(failed["status"]["state"])


# -------------------------------------------------------------------------------- stream shapes
HELLO_SHAPES = ("hello_blocking", "hello_push")
STREAM_SHAPES = ("stream_800_burst", "stream_800_paced", "stream_200_burst")
"""The streaming shapes of issue 13; any ``stream_<N>_<burst|paced>`` is accepted too."""
_STREAM_SHAPE = re.compile(r"^stream_(\d+)_(burst|paced)$")
PACED_INTERVAL = 0.02
"""Seconds between two chunks of a ``paced`` shape (50 chunks per second)."""
STREAM_EXECUTOR = "bench._stream_agents:DemoWithChunksExecutor"
"""The demo agent plus ``chunks N INTERVAL`` (used only when a stream shape is selected)."""
STREAM_SEND_LABEL = "SendMessage (returnImmediately, chunks)"
WAIT_LABEL = "GetTask (bench wait, not counted)"
"""The driver's own polls for a stream task's end: dropped from the calls and requests analysed."""
WAIT_POLL_SECONDS = 0.5


SHAPES = {
    "hello_blocking": (
        "one blocking SendMessage with the demo 'hello' (3 executor events: WORKING, one artifact, COMPLETED), "
        "then one GetTask; no push config"
    ),
    "hello_push": (
        "the same with one push config given inline in the SendMessage: every task event delivered to the "
        "webhook (notifications per task in the table)"
    ),
}


def stream_shape(name: str) -> tuple[int, float] | None:
    """``stream_<N>_<burst|paced>`` -> (N chunks, seconds between chunks); anything else None."""
    match = _STREAM_SHAPE.match(name)
    if match is None:
        return None
    return int(match.group(1)), (PACED_INTERVAL if match.group(2) == "paced" else 0.0)


def shape_description(name: str) -> str:
    if name in SHAPES:
        return SHAPES[name]
    size = artifact_shape(name)
    if size is not None:
        return (
            f"one blocking SendMessage to an executor that makes one artifact holding one raw file part of "
            f"{size / MIB:g} MiB of random bytes (stored in S3) and completes, then one GetTask (the part by "
            "presigned URL when its base64 is over the response's inline budget), then the client's download by "
            "that URL; run once"
        )
    spec = stream_shape(name)
    assert spec is not None, name
    count, interval = spec
    pace = f"{1 / interval:g} chunks per second (a {interval:g} s sleep between chunks)" if interval else "burst"
    return (
        f"one SendMessage (returnImmediately) to an executor that streams {count} chunks of 40 bytes of text into "
        f"one artifact (append), {pace}, between a WORKING and a COMPLETED status update; the window ends when "
        "the task is terminal and the stack quiet (the driver's own GetTask polls are not counted); run once"
    )


# ----------------------------------------------------------------------------- large-part shapes
ARTIFACT_SHAPES = ("artifact_5mb",)
"""The large-part shape of issue 14; any ``artifact_<N>mb`` is accepted too."""
_ARTIFACT_SHAPE = re.compile(r"^artifact_(\d+)mb$")
MIB = 1024 * 1024
FILE_EXECUTOR = "bench._large_agents:DemoWithFilesExecutor"
"""The demo agent plus ``chunks N INTERVAL`` and ``bigfile N SEED`` (used when an artifact shape is
selected)."""
FILE_SEED = 14


def artifact_shape(name: str) -> int | None:
    """``artifact_<N>mb`` -> N MiB in bytes; anything else None."""
    match = _ARTIFACT_SHAPE.match(name)
    return int(match.group(1)) * MIB if match and int(match.group(1)) > 0 else None


def _file_part(task: dict[str, Any]) -> dict[str, Any]:
    """The file part of a ``bigfile`` task's artifact (empty if there is none)."""
    from bench._large_agents import FILE_ARTIFACT_ID

    artifact = next((a for a in task.get("artifacts") or [] if a.get("artifactId") == FILE_ARTIFACT_ID), None)
    parts = (artifact or {}).get("parts") or [{}]
    return dict(parts[0])


def part_form(part: dict[str, Any]) -> str:
    """How a response carries a file part: ``url``, ``raw`` (inline base64) or ``missing``."""
    return "url" if part.get("url") else "raw" if "raw" in part else "missing"


def run_artifact_shape(d: Driver, name: str, tenant: str) -> dict[str, Any]:
    """One task of an artifact shape in a window of its own: blocking SendMessage, GetTask, the
    client's download by the URL (or the inline bytes), checked against what the executor made."""
    sys.path.insert(0, str(ROOT))
    from bench._large_agents import file_bytes, file_name, file_request

    size = artifact_shape(name)
    assert size is not None, name
    info: dict[str, Any] = {"file_bytes": size}
    with d.window(name):
        sent = d.send(tenant, file_request(size, FILE_SEED), label=f"SendMessage (blocking, {name})")
        info["task_id"] = sent["id"]
        info["send_state"] = sent["status"]["state"]
        info["send_part"] = part_form(_file_part(sent))
        got: dict[str, Any] = d.call(f"GetTask ({name})", "GET", f"{tenant}/tasks/{sent['id']}")
        info["final_state"] = got["status"]["state"]
        part = _file_part(got)
        info["get_task_part"] = part_form(part)
        info["get_task_part_fields"] = sorted(part)
        info["filename"] = part.get("filename", "")
        info["media_type"] = part.get("mediaType", "")
        if part.get("url"):
            info["url_scheme"] = str(part["url"]).split(":", 1)[0]
            data = d.download(str(part["url"]), f"download ({name})")
        else:
            import base64

            data = base64.b64decode(part.get("raw") or "")
        info["downloads"] = 1 if part.get("url") else 0
        info["bytes_received"] = len(data)
        info["bytes_exact"] = data == file_bytes(size, FILE_SEED)
        info["filename_as_sent"] = info["filename"] == file_name(size)
    return info


def run_stream_shape(d: Driver, name: str, tenant: str, cap: float) -> dict[str, Any]:
    """One task of a stream shape in a window of its own; never longer than ``cap`` seconds (then
    what happened so far is reported)."""
    spec = stream_shape(name)
    assert spec is not None, name
    count, interval = spec
    if not d.activity.quiet(d.quiet_seconds):
        raise RuntimeError(f"the stack did not go quiet before window {name}")
    d.recorder.window = d.activity.window = name
    started = time.monotonic()
    deadline = started + cap
    info: dict[str, Any] = {"chunks_sent_by_executor": count, "interval_seconds": interval, "cap_seconds": cap}
    try:
        task = d.send(tenant, f"chunks {count} {interval:g}", label=STREAM_SEND_LABEL, immediately=True)
        info["task_id"] = task["id"]
        state = task["status"]["state"]
        while state not in TERMINAL and time.monotonic() < deadline:
            time.sleep(WAIT_POLL_SECONDS)
            state = d.call(WAIT_LABEL, "GET", f"{tenant}/tasks/{task['id']}")["status"]["state"]
        info["seconds_to_terminal"] = round(time.monotonic() - started, 2) if state in TERMINAL else None
        info["timed_out"] = state not in TERMINAL
        info["quiet_after"] = d.activity.quiet(d.quiet_seconds, timeout=max(30.0, deadline - time.monotonic()))
    finally:
        d.seconds[name].append(round(time.monotonic() - started, 2))
        d.recorder.window = d.activity.window = "between"
    if "task_id" in info:
        final = d.call(WAIT_LABEL, "GET", f"{tenant}/tasks/{info['task_id']}")
        info.update(stream_task_outcome(final))
    return info


def stream_task_outcome(task: dict[str, Any]) -> dict[str, Any]:
    """State, status message and what reached the task's answer artifact (chunks, in order?)."""
    sys.path.insert(0, str(ROOT))
    from bench._stream_agents import ARTIFACT_ID, stored_chunks

    status = task.get("status") or {}
    message = " ".join(p.get("text", "") for p in (status.get("message") or {}).get("parts", []))
    artifact = next((a for a in task.get("artifacts") or [] if a.get("artifactId") == ARTIFACT_ID), None)
    texts = [p.get("text", "") for p in (artifact or {}).get("parts", [])]
    stored, in_order = stored_chunks(texts)
    return {
        "final_state": status.get("state", ""),
        "final_status_message": message,
        "chunks_stored": stored,
        "chunks_in_order": in_order,
        "artifact_text_bytes": sum(len(t.encode()) for t in texts),
    }


def measure(
    base: str,
    recorder: Recorder,
    activity: Activity,
    samples: int,
    quick: bool,
    shapes: Sequence[str] = HELLO_SHAPES,
    stream_cap: float = 300.0,
) -> dict[str, Any]:
    sys.path.insert(0, str(BENCH))
    from push import Receiver  # the webhook receiver of bench/push.py

    notes: dict[str, Any] = {}
    streams: dict[str, Any] = {}
    artifacts: dict[str, Any] = {}
    with Receiver() as receiver:
        driver = Driver(base, recorder, activity, receiver)
        try:
            run_sample(driver, 0, {}, light=quick)  # warm-up: first clients, the signing key set, imports
            first = len(recorder.snapshot())
            first_invocation = len(activity.invocations)
            if any(shape in HELLO_SHAPES for shape in shapes):
                for n in range(1, samples + 1):
                    run_sample(driver, n, notes)
            for shape in (s for s in shapes if stream_shape(s)):
                if streams and not all(info.get("quiet_after", True) for info in streams.values()):
                    streams[shape] = {"skipped": "the stack was not quiet after the previous stream shape"}
                    continue
                streams[shape] = run_stream_shape(driver, shape, f"/{shape}", stream_cap)
            for shape in (s for s in shapes if artifact_shape(s)):
                artifacts[shape] = run_artifact_shape(driver, shape, f"/{shape}")
            notes["window_seconds"] = {k: v[-samples:] for k, v in driver.seconds.items()}
            notes["blob_bucket"] = os.environ.get("A2A_BLOB_BUCKET", "")  # set by the stack from the template
        finally:
            driver.close()
    calls = [c for c in recorder.snapshot()[first:] if c["label"] != WAIT_LABEL]
    with activity.cond:
        invocations = [i for i in activity.invocations[first_invocation:] if i["label"] != WAIT_LABEL]
    warmup = recorder.snapshot()[:first]
    return {
        "calls": calls,
        "invocations": invocations,
        "notes": notes,
        "stream_shapes": streams,
        "artifact_shapes": artifacts,
        "window_samples": {shape: 1 for shape in [*streams, *artifacts]},
        "warmup_only": dict(
            Counter(f"{c['component']} {c['service']}.{c['op']}" for c in warmup if c["service"] == "ssm")
        ),
    }


# ------------------------------------------------------------------------------------- the stack
def bench_executor(shapes: Sequence[str]) -> str | None:
    """The executor the stack runs: the product's demo agent for the hello shapes; with a stream
    shape the demo plus ``chunks``; with an artifact shape the demo plus ``chunks`` and ``bigfile``."""
    if any(artifact_shape(s) for s in shapes):
        return FILE_EXECUTOR
    if any(stream_shape(s) for s in shapes):
        return STREAM_EXECUTOR
    return None


def run_stack(
    samples: int, quick: bool = False, shapes: Sequence[str] = HELLO_SHAPES, stream_cap: float = 300.0
) -> dict[str, Any]:
    """Start the local stack in this process (main thread), measure from another thread, stop."""
    sys.path.insert(0, str(ROOT))
    import boto3
    from _stack import measure_on_local_stack

    card = Path(tempfile.mkdtemp(prefix="a2a-bench-")) / "extended-card.json"
    card.write_text(json.dumps({"name": "Extended bench agent"}))
    os.environ.update(
        {
            "A2A_EXTENDED_CARD_FILE": str(card),
            "A2A_AUTH_MODE": "api-key",  # GetExtendedAgentCard answers authenticated callers only
            "A2A_API_KEYS": json.dumps({"bench-key": "bench"}),
        }
    )
    boto3.setup_default_session()
    recorder = Recorder()
    recorder.install(boto3.DEFAULT_SESSION)
    activity = Activity()

    def app_factory() -> Any:
        from a2a_serverless.transport.app import create_app

        return LabelMiddleware(create_app(), activity)

    with contextlib.redirect_stdout(sys.stderr):  # the functions' EMF lines and the ready line
        outcome = measure_on_local_stack(
            lambda base: measure(base, recorder, activity, samples, quick, shapes, stream_cap),
            executor=bench_executor(shapes),
            workers=2,
            app_factory=app_factory,
            resolve_handler=wrap_handlers(activity),
        )
    card.unlink(missing_ok=True)
    card.parent.rmdir()
    if "error" in outcome:
        raise RuntimeError(outcome["error"])
    return outcome
