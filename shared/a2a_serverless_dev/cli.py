"""The ``a2a-serverless`` command.

* ``dev``: the whole stack on this machine, no Docker, no AWS account.
* ``push-redrive``: move dead-lettered push deliveries back onto the delivery queue (deployed
  stacks by name, or any SQS endpoint, such as the local stack's moto).
* ``openapi``: print the generated OpenAPI 3.1 description of the REST binding.
* ``init DIR``: create an agent project of your own (:mod:`.project`).
* ``build [SAM ARGS]``: ``sam build`` with a real Python 3.13 first on the path (a pyenv shim named
  ``python3.13`` resolves to the selected version, and the build then fails).
* ``event KIND``: write a function's test event, for ``sam local invoke --event`` (:mod:`.events`).

Only ``dev`` needs the ``[dev]`` extra (moto, uvicorn, PyYAML); it is imported when ``dev`` runs,
so the other commands work on the base install and ``dev`` without it says what to install.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from a2a_serverless.json_types import JsonValue
from a2a_serverless.lambda_.startup import framework_missing

from . import _push_redrive as push_redrive
from . import events
from ._command import PROG as _PROG
from ._command import fail as _fail
from ._command import positive as _positive
from ._imports import ImportPathError, import_object
from ._project_frameworks import FRAMEWORKS

__all__ = ["main"]

_DEV_EXTRA = "pip install 'a2a-serverless[dev]'"


def main(argv: Sequence[str] | None = None) -> int:
    parser, commands = _parser()
    args, unknown = parser.parse_known_args(argv)
    if args.command == "build":
        return _build(unknown)
    if unknown:  # a flag typo: the command's own usage, not the top level's
        commands[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command == "push-redrive":
        return push_redrive.run(args)
    if args.command == "openapi":
        return _openapi(args.out)
    if args.command == "init":
        return _init(args)
    if args.command == "event":
        return events.run(args)
    return _dev(args)


def _dev(args: argparse.Namespace) -> int:
    try:
        from ._parent import stop_with_make
        from .moto_fixes import MotoShapeError
        from .resources import load_template, repo_template_path
        from .stack import DevOptions, StackError, check_host, run
    except ImportError as exc:  # the base install: no moto, uvicorn or PyYAML
        missing = (exc.name or "a dependency").split(".")[0]
        return _fail(f"needs the [dev] extra ({missing} is not installed): {_DEV_EXTRA}", code=2)
    options = DevOptions(
        host=args.host,
        port=args.port,
        executor=args.executor,
        workers=args.workers,
        log_format=args.log_format,
        state_dir=args.state_dir.resolve() if args.state_dir else None,
        execution_mode=args.execution_mode,
        allow_remote=args.allow_remote,
        console=args.console,
        otlp_endpoint=args.otlp_endpoint,
    )
    try:
        check_host(options)
    except StackError as exc:
        return _fail(str(exc), code=2)
    # Like uvicorn's --app-dir: an executor in the current project imports without installing it.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    template_path = repo_template_path()
    template = load_template(template_path)
    try:
        _check_executor(options.executor, os.environ, template, template_path.parent)
    except ImportPathError as exc:
        return _fail(str(exc), code=2)
    _configure_logging(args.log_format)
    stop_with_make()  # `make dev &` then `kill $!` in a script: make forwards no signal to the stack
    try:
        return run(options, template=template, template_dir=template_path.parent)
    except (StackError, MotoShapeError) as exc:  # a moto the fixes do not fit: its message, no traceback
        return _fail(str(exc), code=1)


def _build(sam_args: Sequence[str]) -> int:
    import shutil
    import subprocess

    from .project import ProjectError, python_for_sam

    sam = shutil.which("sam")
    if sam is None:
        return _fail(
            "the AWS SAM CLI (sam) is not on PATH: see https://docs.aws.amazon.com/serverless-application-"
            "model/latest/developerguide/install-sam-cli.html",
            code=2,
            command="build",
        )
    try:
        first = python_for_sam(os.environ)
    except ProjectError as exc:
        return _fail(str(exc), code=2, command="build")
    env = dict(os.environ)
    if first is not None:
        env["PATH"] = f"{first}{os.pathsep}{env.get('PATH', '')}"
        sys.stderr.write(f"{_PROG} build: python3.13 on PATH is not Python 3.13; using {first}/python3.13\n")
    return subprocess.call([sam, "build", *sam_args], env=env)


def _init(args: argparse.Namespace) -> int:
    from .project import ProjectError, create_project, upgrade_kit

    try:
        if args.upgrade_kit:
            wheel = upgrade_kit(Path(args.directory))
            sys.stdout.write(
                f"{wheel.path}: the kit {wheel.version}, pinned in kit/requirements.txt and pyproject.toml\n"
            )
            return 0
        created = create_project(Path(args.directory), name=args.name, kit=args.kit, framework=args.framework)
    except ProjectError as exc:
        return _fail(str(exc), code=2, command="init")
    sys.stdout.write(f"created {created.root}: the agent {created.name!r} ({created.executor})\n")
    sys.stdout.write(f"next:\n  cd {created.root}\n  {created.run_command}\n  {created.test_command}\n")
    return 0


def _parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    parser = argparse.ArgumentParser(prog=_PROG, description="A2A v1.0 agents on AWS serverless.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    dev = commands.add_parser(
        "dev",
        help="run the agent locally: moto, the template's table and queues, the worker, uvicorn",
        description="Run the whole stack in this process on moto: no Docker, no AWS account. Ctrl-C stops it.",
    )
    dev.add_argument(
        "--host",
        default="127.0.0.1",
        help="interface to listen on; one that is not a loopback address needs --allow-remote (default: %(default)s)",
    )
    dev.add_argument(
        "--allow-remote",
        action="store_true",
        help="let --host be an interface other machines reach: the agent is then open to them, and the console "
        "and its dev proxy are off unless --console",
    )
    dev.add_argument(
        "--console",
        action=argparse.BooleanOptionalAction,
        help="serve the console and its dev API at /_console/ (default: on with a loopback --host, else off)",
    )
    dev.add_argument("--port", type=_port, default=8000, help="HTTP port; 0 picks a free one (default: %(default)s)")
    dev.add_argument(
        "--executor",
        metavar="PKG.MODULE:CLASS",
        help="your AgentExecutor (default: $A2A_EXECUTOR, else the template's ExecutorPath, the demo agent)",
    )
    dev.add_argument(
        "--execution-mode",
        choices=["queue", "durable"],
        help="queue: each turn is a work item for the worker function; durable: each task runs as a durable "
        "execution on the local runner (docs/durable-tasks.md) (default: $A2A_EXECUTION_MODE, else queue)",
    )
    dev.add_argument(
        "--workers",
        type=_positive,
        default=None,
        help="invocations at once per SQS event source (default: as the template allows, e.g. WorkerMaxConcurrency)",
    )
    dev.add_argument(
        "--otlp-endpoint",
        metavar="URL",
        default="",
        help="also send the traces the stack collects to this OTLP/HTTP collector, e.g. Jaeger's "
        "http://127.0.0.1:4318 (docs/tracing.md)",
    )
    dev.add_argument(
        "--state-dir",
        metavar="DIR",
        type=Path,
        help="keep tasks, events, push configs, queued work and stored parts in DIR across restarts "
        "(saved when the stack stops; default: in memory, each start a fresh account)",
    )
    dev.add_argument(
        "--log-format",
        choices=["console", "json"],
        default="console",
        help="console: one readable line per event, labelled with its function, task and request; json: "
        "Powertools' JSON, one object per line (default: %(default)s)",
    )
    redrive = push_redrive.add_parser(commands)
    openapi = commands.add_parser(
        "openapi",
        help="print the OpenAPI 3.1 description of the REST binding",
        description="Print the OpenAPI 3.1 document of the HTTP+JSON binding (v1.0, every route also under "
        "/{tenant}), generated from the method table and the models.",
    )
    openapi.add_argument("--out", metavar="FILE", help="write it to FILE instead of standard output")
    init = commands.add_parser(
        "init",
        help="create a new agent project (your executor, its card, a template that deploys it)",
        description="Create an agent project in DIR (new or empty): an executor module to edit, a card "
        "file, a template.yaml that deploys the kit with your code, samconfig.toml, a test, a README.",
    )
    init.add_argument("directory", metavar="DIR")
    init.add_argument("--name", help="the agent's name (default: DIR's name)")
    init.add_argument(
        "--kit",
        metavar="REQUIREMENT",
        help="how the deployed functions get the kit, as a pip requirement (default: this installed kit, "
        "packed as a wheel into the project's kit/)",
    )
    init.add_argument(
        "--framework",
        choices=sorted(FRAMEWORKS),
        help="build the agent on this framework, through its adapter (docs/frameworks.md), with the kit's extra "
        "for it (default: a plain executor)",
    )
    init.add_argument(
        "--upgrade-kit",
        action="store_true",
        help="in the existing project DIR: replace the kit's wheel in kit/ with this installed kit, and its "
        "version in kit/requirements.txt and pyproject.toml",
    )
    build = commands.add_parser(
        "build",
        help="sam build, with a real Python 3.13 (a pyenv shim would resolve to another version)",
        description="Run `sam build` (any further arguments are sam's) with a Python 3.13 interpreter first on "
        "PATH: the functions' runtime, which sam needs to build the layer without a container.",
    )
    event = events.add_parser(commands)
    return parser, {
        "dev": dev,
        "push-redrive": redrive,
        "openapi": openapi,
        "init": init,
        "build": build,
        "event": event,
    }


def _openapi(out: str | None) -> int:
    from a2a_serverless.transport.openapi import openapi_document

    text = json.dumps(openapi_document(), indent=2) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        Path(out).write_text(text, encoding="utf-8")
    return 0


def _check_executor(
    flag: str | None, environ: Mapping[str, str], template: Mapping[str, JsonValue], template_dir: Path
) -> None:
    """Import the executor the worker will load, so a typo fails now rather than on the first task
    (with the functions' code on the path, as the stack will have it)."""
    from ._template import code_dirs

    for code_dir in reversed(code_dirs(template)):
        path = str((template_dir / code_dir).resolve())
        if path not in sys.path:
            sys.path.insert(0, path)
    if flag:
        source, path = "--executor", flag
    elif environ.get("A2A_EXECUTOR"):
        source, path = "A2A_EXECUTOR", environ["A2A_EXECUTOR"]
    else:
        source, path = "template ExecutorPath", str(template["Parameters"]["ExecutorPath"]["Default"])
    try:
        target = import_object(path)
    except ImportPathError as exc:  # a framework that is not installed: the line naming its extra
        raise ImportPathError(framework_missing(path, exc) or f"{source} {path!r}: {exc}") from exc
    if not callable(target) and not callable(getattr(target, "execute", None)):  # a class, or an executor instance
        raise ImportPathError(f"{source} {path!r} is not a class")
    # What the worker does with it: instantiate it, and accept only an executor (ours or a2a-sdk's).
    from a2a_serverless.config import ConfigError
    from a2a_serverless.wiring import load_executor

    try:
        load_executor(path)
    except ConfigError as exc:
        raise ImportPathError(f"{source} {path!r}: {exc}") from exc


def _configure_logging(log_format: str = "console") -> None:
    from uvicorn.logging import DefaultFormatter

    handler = logging.StreamHandler()
    if log_format == "json":
        handler.setFormatter(_JsonFormatter())
    else:
        # The look of uvicorn's own lines, which share the terminal.
        handler.setFormatter(DefaultFormatter("%(levelprefix)s %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    # botocore announces at INFO where it found credentials, once per client.
    logging.getLogger("botocore").setLevel(logging.WARNING)


class _JsonFormatter(logging.Formatter):
    """The stack's own lines as JSON objects, like its processes' (``--log-format json``)."""

    def format(self, record: logging.LogRecord) -> str:
        return json.dumps(
            {"level": record.levelname, "message": record.getMessage(), "function_name": "stack"},
            separators=(",", ":"),
        )


def _port(value: str) -> int:
    if not value.isdigit() or not 0 <= int(value) <= 65535:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port number (0 to 65535; 0 picks a free one)")
    return int(value)
