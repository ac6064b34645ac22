"""Cold start where it happens: each Lambda handler's import time inside the Lambda Python 3.13 image.

For every function of a ``sam build`` output (its built template names the handlers), a fresh
container of the image (``make docker``; docs/lambda-runtime.md) imports the handler's module with
the built layer mounted read-only at ``/opt`` and the function's code at ``/var/task``, on the
search path the image's bootstrap gives a function: what a cold start pays before its first
event. The gateway under the Web Adapter (``functions/run.sh``) counts uvicorn and the app it
serves; a handler chosen by a template condition is measured for each branch. Beside them, the
reference A2A server (``bench/_reference_server.py``: ``a2a-sdk[http-server]`` pip-installed for
CPython 3.13 and compiled, mounted the same way) in the same image: its imports, and its imports
with the Starlette app built, which its cold start pays before serving. Each figure is the median of
``--runs`` containers, wall and CPU time; the targets take turns, so load on the machine weighs on
all of them alike, and CPU time is the steadier figure on a busy machine.

``--compiled-preview LABEL`` measures a copy of that build's layer too, compiled by the image's
interpreter with PEP 552's unchecked-hash invalidation: a layer that ships bytecode, before the
build makes one.

    .venv/bin/python bench/lambda_import_times.py [--build LABEL=DIR ...] [--compiled-preview LABEL] \\
        [--function NAME ...] [--runs 5] [--json out.json]

``--build`` names a ``sam build`` output of this machine's architecture (default: ``.aws-sam/build``);
given several times, their functions are measured side by side.

``--tracing`` also measures every target with tracing on (issue 32), as the template's Tracing
parameter deploys it: the tracing layer unpacked into ``/opt`` beside the core layer, ``A2A_TRACING=otlp``
and the X-Ray propagator, exporting to a closed local port (no network); once plain (Tracing Otlp),
once signing each export (Tracing CloudWatch: a botocore session is made for the signature). A
handler's import is the same either way (the switch loads OpenTelemetry on the first traced call):
the difference shows with ``--first-call``, whose calls are traced.

``--floors`` also times the third-party libraries each kind of function needs, imported alone from
the layer (:data:`FLOORS`): what no cut of the kit's own imports can go below.

``--first-call`` also times, for every function of :data:`FIRST_CALLS` (all but the gateway under
the Web Adapter, whose first request goes through uvicorn's socket), the import followed by a first
call of a cheap path in the same fresh container (its own target): what a cold start pays before its
first answer when a function builds something on first use (validators of the models it uses, the
runtime, the authorizer's JWT stack in ``jwt`` mode) rather than at import. The API functions' calls
go through their handlers with the in-memory store (``A2A_STORE=memory``) and no network, so they
leave out what every deployed function's first request adds the same way before and after: boto3
and the AWS clients (their connections), and, in ``jwt`` mode, fetching the issuer's keys. Building
the call's event is not timed. The functions that answer no request (the workers, the push
dispatcher and delivery, the dead-letter function, the sweeper) are timed to what their first event
starts with, the first AWS client (the DynamoDB client; the durable worker's is the Lambda client the
durable SDK makes at the start of every invocation, before the handler's body), with boto3 imported
if it is not yet: what the API functions' calls leave out, and where a cut of the import moves boto3
to, like for like. (An event cannot run further offline: it reads and writes through AWS's APIs.)

``--restored`` (with ``--first-call``) also times each of those first calls in an environment
restored from a SnapStart snapshot: the import and the before-snapshot hook run untimed (Lambda runs
them once, when it publishes a version), then the after-restore hook and the call are timed. That is
what a restored environment runs before it answers, besides the restore itself (which only Lambda
can measure); the import is what the restore skips.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from a2a_serverless_dev.resources import load_template

ROOT = Path(__file__).resolve().parents[1]
IMAGE = "a2a-serverless/lambda-python:3.13-x86_64"  # make docker (infra/lambda-image); or AWS's, with --image
# The search path infra/lambda-image/bootstrap gives a function (Lambda's for Python 3.11 and later).
PYTHONPATH = "/var/task:/opt/python/lib/python3.13/site-packages:/opt/python"
GATEWAY_IMPORT = "uvicorn, a2a_serverless.transport.app"  # functions/run.sh: uvicorn --factory ...app:create_app
REFERENCE_SDK = "a2a-sdk[http-server]"
# Timed inside the container: the target's code (a handler's imports), nothing before it but `time`.
_PROBE = (
    "import time\nw, c = time.perf_counter(), time.process_time()\n{code}\n"
    "print(time.perf_counter() - w, time.process_time() - c)"
)
# --first-call: after the handler's import (timed), the event is built (not timed), then the call
# is timed; the figure is the sum.
_FIRST_CALL_PROBE = (
    "import time\nw, c = time.perf_counter(), time.process_time()\n{code}\n"
    "w, c = time.perf_counter() - w, time.process_time() - c\n{setup}\n"
    "w2, c2 = time.perf_counter(), time.process_time()\n{call}\n"
    "print(w + time.perf_counter() - w2, c + time.process_time() - c2)"
)
# --restored: the handler's import and SnapStart's before-snapshot hook (what a version's publication
# runs once, not timed), the event built (not timed), then the after-restore hook and the first call
# timed: what an environment restored from the snapshot runs before it answers, besides the restore.
_RESTORED_PROBE = (
    "import time\n{code}\nfrom a2a_serverless.lambda_ import snapstart\nsnapstart.before_snapshot()\n{setup}\n"
    "w, c = time.perf_counter(), time.process_time()\nsnapstart.after_restore()\n{call}\n"
    "print(time.perf_counter() - w, time.process_time() - c)"
)
# The recorded events of tests/functions/events, mounted at /events, and a Lambda context.
_EVENTS = """import json
class Context:
    function_name, memory_limit_in_mb, aws_request_id = "f", 512, "r"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:f"
    def get_remaining_time_in_millis(self): return 30_000
def api_event(method, path):
    event = json.load(open("/events/apigw_rest_post_message_send.json"))
    event["httpMethod"] = event["requestContext"]["httpMethod"] = method
    event["path"] = event["resource"] = event["requestContext"]["resourcePath"] = path
    event["requestContext"]["path"] = "/v1" + path
    event["body"] = None
    return event"""
# Lambda sets both; a client needs its Region (boto3 reads AWS_DEFAULT_REGION).
_REGION = "import os\nos.environ.update(AWS_REGION='us-east-1', AWS_DEFAULT_REGION='us-east-1')"


def _api_call(method: str, path: str, status: int, body: str = "None") -> tuple[str, str]:
    """An API function's first call: ``method path`` (with ``body``, Python source) answered ``status``."""
    return f"event = api_event({method!r}, {path!r})\nevent['body'] = {body}", (
        f"assert handler(event, Context())['statusCode'] == {status}"
    )


# A push config function's first call: a task that does not exist (the store read, the error answered).
_UNKNOWN_TASK = "/tasks/no-such-task/pushNotificationConfigs"
# SendMessage's first call: a message to a task that does not exist, validated and refused after the
# store's read (a new task would start the in-memory store's inline worker in the same process).
_SEND_TO_UNKNOWN_TASK = (
    "json.dumps({'message': {'messageId': 'm-1', 'role': 'ROLE_USER', 'taskId': 'no-such-task',"
    " 'parts': [{'text': 'hello'}]}})"
)
# The functions that answer no request (SQS, stream and schedule events): their first AWS client,
# which each makes at its first event, as the worker (a table's client, boto3 imported if not yet).
_FIRST_AWS_CLIENT = (
    "its first AWS client (DynamoDB, boto3)",
    _REGION,
    "from a2a_serverless.aws import dynamodb_client\ndynamodb_client()",
)
FIRST_CALLS: dict[str, tuple[str, str, str]] = {
    # function: (what the first call is, its event (not timed), the call)
    "AgentCardFunction": ("GET the card", *_api_call("GET", "/.well-known/agent-card.json", 200)),
    "GatewayFunction (a2a_serverless.functions.gateway.handler)": (
        "GET the card",
        *_api_call("GET", "/.well-known/agent-card.json", 200),
    ),
    "ListTasksFunction": ("GET /tasks", *_api_call("GET", "/tasks", 200)),
    "SendMessageFunction": (
        "a message to an unknown task (404)",
        *_api_call("POST", "/message:send", 404, _SEND_TO_UNKNOWN_TASK),
    ),
    "CreatePushConfigFunction": (
        "for an unknown task (404)",
        *_api_call("POST", _UNKNOWN_TASK, 404, "json.dumps({'url': 'https://example.com/hook'})"),
    ),
    "GetPushConfigFunction": ("for an unknown task (404)", *_api_call("GET", _UNKNOWN_TASK + "/c-1", 404)),
    "ListPushConfigsFunction": ("for an unknown task (404)", *_api_call("GET", _UNKNOWN_TASK, 404)),
    "DeletePushConfigFunction": ("for an unknown task (404)", *_api_call("DELETE", _UNKNOWN_TASK + "/c-1", 404)),
    "GetExtendedCardFunction": ("none declared (400)", *_api_call("GET", "/extendedAgentCard", 400)),
    "AuthorizerFunction": (
        "none mode, a request allowed",
        "event = json.load(open('/events/apigw_request_authorizer.json'))",
        "assert handler(event, Context())['principalId'] == 'anonymous'",
    ),
    "WorkerFunction": _FIRST_AWS_CLIENT,
    "PushDispatcherFunction": _FIRST_AWS_CLIENT,
    "PushDeliveryFunction": _FIRST_AWS_CLIENT,
    "DeadLetterFunction": _FIRST_AWS_CLIENT,
    "SweeperFunction": _FIRST_AWS_CLIENT,
    "DurableWorkerFunction": (
        "the SDK's Lambda client (boto3), made as every invocation starts",
        _REGION,
        "from aws_durable_execution_sdk_python.lambda_service import LambdaClient\nLambdaClient.initialize_client()",
    ),
}
FIRST_CALL_JWT = (
    "jwt mode, its services (JWT stack, no key fetch)",
    "from a2a_serverless.config import Settings\n"
    "settings = Settings(store='memory', authorizer_mode='jwt', jwt_issuer='https://issuer.example',"
    " jwt_audience='app')",
    "from a2a_serverless.lambda_.authorizer import AuthorizerServices\nAuthorizerServices.from_settings(settings)",
)
"""The authorizer in jwt mode: its first request builds its services, which loads the JWT stack
(at import before issue 29's cut); its key fetch (network) is left out."""
# --floors: the third-party libraries a kind of function cannot do without, imported alone from a
# build's layer: the least its import can cost as the code is built (not a function of the template).
FLOORS = {
    "HTTP functions' libraries (asyncio, pydantic, Starlette, mangum, Powertools)": (
        "import asyncio, starlette.applications, mangum, aws_lambda_powertools\nfrom pydantic import BaseModel"
    ),
    "SQS functions' libraries (pydantic, Powertools with batch processing, asyncio)": (
        "import aws_lambda_powertools.utilities.batch\nfrom pydantic import BaseModel"
    ),
    "pydantic and Powertools (logging, metrics) alone": "import aws_lambda_powertools\nfrom pydantic import BaseModel",
    "the durable SDK alone (its boto3 from the image)": "import aws_durable_execution_sdk_python.execution",
    "boto3 alone (from the image; every function's first AWS client loads it)": "import boto3",
}
REFERENCE_IMPORT = "import _reference_server"
REFERENCE_APP = REFERENCE_IMPORT + "\n_reference_server.create_reference_app('http://127.0.0.1:8000')"
# --first-call: the reference's first requests, each through its ASGI app in the same fresh container,
# the API functions' like for like: the card, and JSON-RPC's SendMessage to a task that does not exist.
_REFERENCE_REQUEST = """import asyncio, json
app = _reference_server.create_reference_app('http://127.0.0.1:8000')
async def request(method, path, body):
    sent = []
    async def receive():
        return {'type': 'http.request', 'body': body, 'more_body': False}
    async def send(message):
        sent.append(message)
    headers = [(b'host', b'127.0.0.1:8000'), (b'content-type', b'application/json'), (b'a2a-version', b'1.0')]
    scope = {'type': 'http', 'asgi': {'version': '3.0'}, 'http_version': '1.1', 'method': method,
             'scheme': 'http', 'path': path, 'raw_path': path.encode(), 'query_string': b'', 'root_path': '',
             'headers': headers, 'client': ('127.0.0.1', 1), 'server': ('127.0.0.1', 8000)}
    await app(scope, receive, send)
    return sent[0]['status'], b''.join(m.get('body', b'') for m in sent[1:])
"""
REFERENCE_FIRST_CALLS = {
    "GET the card": "assert asyncio.run(request('GET', '/.well-known/agent-card.json', b''))[0] == 200",
    "SendMessage to an unknown task (JSON-RPC error)": (
        "body = json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'SendMessage', 'params': {'message': {"
        "'messageId': 'm-1', 'role': 'ROLE_USER', 'taskId': 'no-such-task', 'parts': [{'text': 'hello'}]}}})\n"
        "status, answer = asyncio.run(request('POST', '/', body.encode()))\n"
        "assert status == 200 and b'TASK_NOT_FOUND' in answer, answer"
    ),
}


@dataclass(frozen=True)
class Target:
    """What a fresh container times: its code, what is mounted at /opt and /var/task."""

    name: str
    code: str
    opt: Path
    task: Path
    first_call: tuple[str, str] | None = None
    """(event setup, call) timed after the import, with the in-memory store (``--first-call``)."""
    env: tuple[tuple[str, str], ...] = ()
    """More of the container's environment (``--tracing``)."""
    restored: bool = False
    """``first_call`` timed in an environment restored from a SnapStart snapshot (``--restored``)."""


def built_functions(build_dir: Path) -> list[tuple[str, str, Path]]:
    """Each function of the built template: (its name, the import its handler needs, its built
    code). A handler chosen by a condition (the gateway's: run.sh under the Web Adapter, else a
    Python handler) gives one entry per branch."""
    resources = load_template(build_dir / "template.yaml")["Resources"]
    functions: list[tuple[str, str, Path]] = []
    for name, resource in sorted(resources.items()):
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        properties = resource["Properties"]
        handler = properties["Handler"]
        handlers = handler["Fn::If"][1:] if isinstance(handler, dict) else [handler]
        for each in handlers:
            modules = GATEWAY_IMPORT if each.endswith(".sh") else each.rsplit(".", 1)[0]
            label = f"{name} ({each})" if len(handlers) > 1 else name
            functions.append((label, f"import {modules}", build_dir / properties["CodeUri"]))
    return functions


def built_layer(build_dir: Path, layer: str = "CoreLayer") -> Path:
    """A layer the template builds (the core layer, or ``TracingLayer``; layers named by ARN, such
    as the Web Adapter, are not built)."""
    resources = load_template(build_dir / "template.yaml")["Resources"]
    return build_dir / str(resources[layer]["Properties"]["ContentUri"])


TRACING_ENV = (
    ("A2A_TRACING", "otlp"),
    ("OTEL_PROPAGATORS", "tracecontext,baggage,xray-lambda"),
    ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:9/v1/traces"),  # closed: nothing leaves
    ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "1"),
)
"""Tracing on as the template sets it (Tracing Otlp); CloudWatch adds the signing, with test
credentials in the function's Region, as Lambda gives them."""
SIGNING_ENV = (
    ("A2A_TRACING_SIGV4", "xray"),
    ("AWS_REGION", "us-east-1"),
    ("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"),
    ("AWS_SECRET_ACCESS_KEY", "secret"),
    ("AWS_SESSION_TOKEN", "token"),
)


def with_tracing_layer(build_dir: Path, into: Path) -> Path:
    """The core and tracing layers unpacked into one ``/opt``, as Lambda unpacks a function's layers."""
    shutil.copytree(built_layer(build_dir), into, symlinks=True)
    shutil.copytree(built_layer(build_dir, "TracingLayer"), into, symlinks=True, dirs_exist_ok=True)
    return into


def docker_python(
    image: str, mounts: dict[Path, str], *args: str, read_only: bool = True, env: dict[str, str] | None = None
) -> str:
    """Run the image's python3.13 (not the Lambda entrypoint) in a fresh container without network."""
    volumes = [f"--volume={host}:{path}{':ro' if read_only else ''}" for host, path in mounts.items()]
    command = ["docker", "run", "--rm", "--network=none", *volumes, f"--env=PYTHONPATH={PYTHONPATH}"]
    command += [f"--env={name}={value}" for name, value in (env or {}).items()]
    if not read_only:  # what it writes belongs to the caller
        command.append(f"--user={os.getuid()}:{os.getgid()}")
    command += ["--entrypoint=python3.13", image, *args]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def compile_copy(image: str, layer: Path, into: Path) -> Path:
    """A copy of ``layer`` with every module compiled by the image's interpreter (unchecked-hash)."""
    shutil.copytree(layer, into, symlinks=True)
    docker_python(
        image, {into: "/opt"}, "-m", "compileall", "-q", "--invalidation-mode", "unchecked-hash", "/opt",
        read_only=False,
    )  # fmt: skip
    return into


def reference_stack(image: str, into: Path, version: str) -> Path:
    """``a2a-sdk[http-server]`` for CPython 3.13 (manylinux x86_64 wheels), compiled by the image's
    interpreter, as a layer: ``into/python``. Reused when ``into`` already holds it."""
    site = into / "python"
    if not (into / f".installed-{version}").exists():
        shutil.rmtree(into, ignore_errors=True)
        pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        pip += ["--no-warn-conflicts", "--no-compile", "--target", str(site), "--only-binary=:all:"]
        pip += ["--platform", "manylinux2014_x86_64", "--python-version", "3.13", "--implementation", "cp"]
        subprocess.run([*pip, f"{REFERENCE_SDK}=={version}"], check=True)
        shutil.rmtree(site / "bin", ignore_errors=True)
        docker_python(
            image, {into: "/opt"}, "-m", "compileall", "-q", "--invalidation-mode", "unchecked-hash", "/opt",
            read_only=False,
        )  # fmt: skip
        (into / f".installed-{version}").touch()
    return into


def layer_facts(layer: Path) -> dict[str, int]:
    """Modules and bytecode for CPython 3.13, files, and the size unzipped and zipped (as deployed)."""
    modules = [p for p in layer.rglob("*.py") if "__pycache__" not in p.parts]
    compiled = sum((p.parent / "__pycache__" / f"{p.stem}.cpython-313.pyc").is_file() for p in modules)
    files = [p for p in layer.rglob("*") if p.is_file()]
    with tempfile.TemporaryFile() as out:
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in files:
                archive.write(path, path.relative_to(layer))
        zipped = out.tell()
    return {
        "modules": len(modules),
        "modules_compiled": compiled,
        "files": len(files),
        "unzipped_bytes": sum(p.stat().st_size for p in files),
        "zipped_bytes": zipped,
    }


def measure(image: str, target: Target) -> tuple[float, float] | str:
    """(wall ms, CPU ms) of one fresh container's import (and first call), or the error that stopped it."""
    mounts = {target.opt: "/opt", target.task: "/var/task"}
    env: dict[str, str] = dict(target.env)
    probe = _PROBE.format(code=target.code)
    if target.first_call is not None:
        setup, call = target.first_call
        mounts[ROOT / "tests" / "functions" / "events"] = "/events"
        env["A2A_STORE"] = "memory"
        template = _RESTORED_PROBE if target.restored else _FIRST_CALL_PROBE
        probe = template.format(code=target.code, setup=_EVENTS + "\n" + setup, call=call)
    try:
        out = docker_python(image, mounts, "-c", probe, env=env)
    except subprocess.CalledProcessError as exc:
        lines = exc.stderr.strip().splitlines()
        return lines[-1] if lines else f"exit {exc.returncode}"
    wall, cpu = (float(v) * 1000 for v in out.splitlines()[-1].split())  # the handler may log before
    return wall, cpu


def rounds(targets: list[Target], runs: int) -> Iterator[Target]:
    """Every target once per round, ``runs`` rounds: load on the machine falls on all of them alike."""
    for _ in range(runs):
        yield from targets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--build",
        action="append",
        metavar="LABEL=DIR",
        help="a sam build output to measure, under a label (repeat to measure several side by side; "
        "default: 'as built=.aws-sam/build')",
    )
    parser.add_argument("--image", default=IMAGE)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--compiled-preview",
        action="append",
        default=[],
        metavar="LABEL",
        help="measure a compiled copy of that build's layer too",
    )
    parser.add_argument("--reference-version", default=_installed("a2a-sdk") or "1.3.0")
    parser.add_argument(
        "--reference-dir", type=Path, help="where the reference stack is installed (kept for the next run)"
    )
    parser.add_argument(
        "--function",
        action="append",
        default=[],
        metavar="NAME",
        help="measure only this function of the template (e.g. AuthorizerFunction; repeat for several)",
    )
    parser.add_argument(
        "--first-call",
        action="store_true",
        help="also time import + a first call of a cheap path for each function (FIRST_CALLS)",
    )
    parser.add_argument(
        "--restored",
        action="store_true",
        help="with --first-call: also time each first call in an environment restored from a SnapStart snapshot",
    )
    parser.add_argument(
        "--tracing",
        action="store_true",
        help="also measure each target with tracing on (the tracing layer; Otlp, and CloudWatch signing)",
    )
    parser.add_argument(
        "--floors",
        action="store_true",
        help="also time the third-party libraries each kind of function needs, alone (FLOORS)",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    builds = dict(_labelled(b) for b in args.build or [f"as built={ROOT / '.aws-sam' / 'build'}"])

    scratch = Path(tempfile.mkdtemp(prefix="lambda-import-times."))
    try:
        layers: dict[str, tuple[Path, Path]] = {}  # variant: (its build, its layer)
        environments: dict[str, tuple[tuple[str, str], ...]] = {}  # variant: its environment, if any
        for label, build_dir in builds.items():
            layers[label] = (build_dir, built_layer(build_dir))
            if label in args.compiled_preview:
                copy = compile_copy(args.image, layers[label][1], scratch / f"compiled-{len(layers)}")
                layers[f"{label}, compiled"] = (build_dir, copy)
            if args.tracing:
                both = with_tracing_layer(build_dir, scratch / f"traced-{len(layers)}")
                layers[f"{label}, tracing Otlp"] = layers[f"{label}, tracing CloudWatch"] = (build_dir, both)
                environments[f"{label}, tracing Otlp"] = TRACING_ENV
                environments[f"{label}, tracing CloudWatch"] = TRACING_ENV + SIGNING_ENV
        reference_dir = args.reference_dir or scratch / "reference"
        reference = reference_stack(args.image, reference_dir.resolve(), args.reference_version)
        reference_code = scratch / "reference-code"
        reference_code.mkdir()
        shutil.copy(ROOT / "bench" / "_reference_server.py", reference_code)

        targets = [
            Target("reference a2a-sdk server: imports + app", REFERENCE_APP, reference, reference_code),
            Target("reference a2a-sdk server: imports", REFERENCE_IMPORT, reference, reference_code),
        ]
        if args.first_call:
            targets += [
                Target(
                    f"reference a2a-sdk server: imports + app + first request: {label}",
                    f"{REFERENCE_IMPORT}\n{_REFERENCE_REQUEST}\n{call}",
                    reference,
                    reference_code,
                )
                for label, call in REFERENCE_FIRST_CALLS.items()
            ]
        functions = {
            (name, variant): Target(f"{name} [{variant}]", statement, layer, code, env=environments.get(variant, ()))
            for variant, (build_dir, layer) in layers.items()
            for name, statement, code in built_functions(build_dir)
            if not args.function or name.split(" ")[0] in args.function
        }
        if args.first_call:
            functions.update(_first_call_targets(functions, restored=args.restored))
        if args.floors:
            empty = scratch / "no-code"
            empty.mkdir()
            for variant, (_, layer) in layers.items():
                for label, code in FLOORS.items():
                    functions[(f"floor: {label}", variant)] = Target(f"floor: {label} [{variant}]", code, layer, empty)
        targets += [functions[key] for key in sorted(functions)]  # each function's variants together
        samples: dict[str, list[tuple[float, float]]] = {t.name: [] for t in targets}
        errors: dict[str, str] = {}
        for target in rounds(targets, args.runs):
            if target.name in errors:
                continue
            result = measure(args.image, target)
            if isinstance(result, str):
                errors[target.name] = result
            else:
                samples[target.name].append(result)
        facts = {variant: layer_facts(layer) for variant, (_, layer) in layers.items()}
        facts["reference"] = layer_facts(reference)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    results = _summary(targets, samples, errors)
    _print(results, facts, args.runs)
    if args.json:
        document = {
            "image": args.image,
            "builds": {label: str(build_dir) for label, build_dir in builds.items()},
            "runs": args.runs,
            "load_average": os.getloadavg(),
            "reference_sdk": f"{REFERENCE_SDK}=={args.reference_version}",
            "layers": facts,
            "imports": results,
        }
        args.json.write_text(json.dumps(document, indent=2) + "\n")


def _first_call_targets(functions: dict[tuple[str, str], Target], *, restored: bool) -> dict[tuple[str, str], Target]:
    """For each function of FIRST_CALLS (and the authorizer's jwt mode), the same import followed by
    its first call, in every variant measured; with ``restored``, also that first call in an
    environment restored from a SnapStart snapshot (not the durable worker's: it has no SnapStart)."""
    extra: dict[tuple[str, str], Target] = {}
    for (name, variant), target in functions.items():
        calls = [FIRST_CALLS[name]] if name in FIRST_CALLS else []
        if name == "AuthorizerFunction":
            calls.append(FIRST_CALL_JWT)
        code = f"{target.code}\nhandler = {target.code.split()[-1]}.handler"
        for label, setup, call in calls:
            kinds = [("first call", False)]
            if restored and name != "DurableWorkerFunction":
                kinds.append(("first call after a SnapStart restore", True))
            for kind, after_restore in kinds:
                named = f"{name} + {kind}: {label}"
                extra[(named, variant)] = Target(
                    f"{named} [{variant}]", code, target.opt, target.task, first_call=(setup, call), env=target.env,
                    restored=after_restore,
                )  # fmt: skip
    return extra


def _labelled(build: str) -> tuple[str, Path]:
    label, _, directory = build.rpartition("=")
    return label or "as built", Path(directory).resolve()


def _installed(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _summary(
    targets: list[Target], samples: dict[str, list[tuple[float, float]]], errors: dict[str, str]
) -> dict[str, dict[str, object]]:
    reference = samples[targets[0].name]
    reference_wall = statistics.median(w for w, _ in reference) if reference else None
    reference_cpu = statistics.median(c for _, c in reference) if reference else None
    results: dict[str, dict[str, object]] = {}
    for target in targets:
        if target.name in errors:
            results[target.name] = {"code": target.code, "error": errors[target.name]}
            continue
        wall = statistics.median(w for w, _ in samples[target.name])
        cpu = statistics.median(c for _, c in samples[target.name])
        results[target.name] = {
            "code": target.code,
            "wall_ms": round(wall, 1),
            "cpu_ms": round(cpu, 1),
            "wall_of_reference": round(wall / reference_wall, 2) if reference_wall else None,
            "cpu_of_reference": round(cpu / reference_cpu, 2) if reference_cpu else None,
            "samples_ms": [[round(w, 1), round(c, 1)] for w, c in samples[target.name]],
        }
    return results


def _print(results: dict[str, dict[str, object]], facts: dict[str, dict[str, int]], runs: int) -> None:
    width = max(len(name) for name in results)
    print(f"{'import in the Lambda image':<{width}}  wall ms   CPU ms  of reference (wall, CPU)  [median of {runs}]")
    for name, row in results.items():
        if "error" in row:
            print(f"{name:<{width}}  {row['error']}")
            continue
        ratio = f"{row['wall_of_reference']:.2f}, {row['cpu_of_reference']:.2f}"
        print(f"{name:<{width}}  {row['wall_ms']:7.0f}  {row['cpu_ms']:7.0f}  {ratio}")
    for variant, fact in facts.items():
        print(
            f"layer [{variant}]: {fact['modules']} modules, {fact['modules_compiled']} with 3.13 bytecode, "
            f"{fact['unzipped_bytes'] / 1e6:.1f} MB unzipped, {fact['zipped_bytes'] / 1e6:.1f} MB zipped"
        )


if __name__ == "__main__":
    main()
