"""``a2a-serverless dev`` refuses a bad executor before starting anything; ``push-redrive`` says what
went wrong in one line, and signs for the local stack with its test key."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from a2a_serverless_dev import cli, stack
from a2a_serverless_dev._command import command_line
from testkit.served import served


@pytest.fixture
def nothing_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))  # main() adds the working directory

    def run(*_: Any, **__: Any) -> int:
        raise AssertionError("the stack must not start")

    monkeypatch.setattr(stack, "run", run)


def test_a_missing_executor_module_exits_2_with_one_line() -> None:
    # When: the real entry point, in its own process
    result = subprocess.run(
        [sys.executable, "-m", "a2a_serverless_dev", "dev", "--executor", "no_such_pkg.agent:MyAgent"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    # Then
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "a2a-serverless dev: error: --executor 'no_such_pkg.agent:MyAgent': cannot import module "
        "'no_such_pkg.agent' (ModuleNotFoundError: No module named 'no_such_pkg')"
    ]


@pytest.mark.usefixtures("nothing_starts")
@pytest.mark.parametrize(
    ("executor", "reason"),
    [
        pytest.param("a2a_serverless_dev", "must look like 'package.module:Name'", id="no-colon"),
        pytest.param("a2a_serverless_dev.cli:NoSuchAgent", "has no attribute 'NoSuchAgent'", id="missing-class"),
        pytest.param("a2a_serverless_dev.stack:GATEWAY_APP", "is not a class", id="not-callable"),
        pytest.param("json:dumps", "is not an AgentExecutor", id="a-function"),
        pytest.param("datetime:date", "creating it failed (TypeError", id="a-class-that-needs-arguments"),
    ],
)
def test_a_bad_executor_flag_exits_2(executor: str, reason: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["dev", "--executor", executor])

    assert code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"a2a-serverless dev: error: --executor {executor!r}")
    assert reason in line


@pytest.mark.usefixtures("nothing_starts")
def test_the_environments_executor_is_checked_too(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("A2A_EXECUTOR", "no_such_pkg:Agent")

    assert cli.main(["dev"]) == 2
    assert "A2A_EXECUTOR 'no_such_pkg:Agent'" in capsys.readouterr().err


@pytest.mark.usefixtures("nothing_starts")
@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["dev", "--workers", "0"], id="no-workers"),
        pytest.param(["dev", "--port", "70000"], id="bad-port"),
        pytest.param([], id="no-command"),
        pytest.param(["push-redrive", "--endpoint-url", "localhost:4566"], id="endpoint-without-scheme"),
        pytest.param(["push-redrive", "--endpoint-url", "http://[::1:4566"], id="endpoint-malformed"),
    ],
)
def test_bad_arguments_exit_2(args: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(args)

    assert exited.value.code == 2


def test_openapi_prints_the_rest_description(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["openapi"]) == 0

    document = json.loads(capsys.readouterr().out)
    assert document["openapi"].startswith("3.1")
    assert "post" in document["paths"]["/{tenant}/message:send"]


def test_openapi_writes_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "openapi.json"

    assert cli.main(["openapi", "--out", str(out)]) == 0

    assert capsys.readouterr().out == ""
    assert "get" in json.loads(out.read_text(encoding="utf-8"))["paths"]["/tasks/{id}"]


@pytest.mark.parametrize(
    ("source", "cause"),
    [
        pytest.param("def broken(:\n", "SyntaxError: invalid syntax (", id="syntax-error"),
        pytest.param(
            "import os\nKEY = os.environ['NO_SUCH_API_KEY_FOR_TEST']\n", "KeyError: 'NO_SUCH_API_KEY", id="key-error"
        ),
        pytest.param("raise RuntimeError('boom\\nsecond line')\n", "RuntimeError: boom second line", id="raises"),
    ],
)
def test_an_executor_module_that_fails_at_import_exits_2_with_one_line(tmp_path: Path, source: str, cause: str) -> None:
    # Given: an agent module in the working directory (not installed, not on PYTHONPATH) that fails
    (tmp_path / "bad_agent.py").write_text(source, encoding="utf-8")

    # When: the real entry point runs from there
    result = subprocess.run(
        [sys.executable, "-m", "a2a_serverless_dev", "dev", "--executor", "bad_agent:Agent"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )

    # Then: one line naming the path and the cause, no traceback, exit 2
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    prefix = "a2a-serverless dev: error: --executor 'bad_agent:Agent': cannot import module 'bad_agent' ("
    assert line.startswith(prefix)
    assert cause in line


def test_a_flag_typo_shows_devs_own_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["dev", "--prot", "9000"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: a2a-serverless dev ")
    assert "unrecognized arguments: --prot 9000" in err


def test_a_bad_port_says_what_is_wrong(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["dev", "--port", "http"])
    assert "'http' is not a port number (0 to 65535" in capsys.readouterr().err


def test_a_port_in_use_suggests_another() -> None:
    import socket

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(stack.StackError, match="choose another with --port"), stack._bind("127.0.0.1", port):
            pass


def test_dev_without_the_dev_extra_says_what_to_install() -> None:
    # Given: the base install (moto absent)
    code = "import sys; sys.modules['moto'] = None; from a2a_serverless_dev.cli import main; sys.exit(main(['dev']))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)

    # Then: one line, exit 2
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "a2a-serverless dev: error: needs the [dev] extra (moto is not installed): pip install 'a2a-serverless[dev]'"
    ]


@pytest.mark.parametrize(
    ("on_path", "head"),
    [
        pytest.param(True, ["a2a-serverless"], id="this-installation-on-path"),
        pytest.param(False, [str(Path(sys.executable).with_name("a2a-serverless"))], id="not-on-path"),
    ],
)
def test_a_printed_command_runs_from_the_shell_that_started_it(
    on_path: bool, head: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a shell whose PATH has this installation's scripts, or not (`make dev` runs .venv/bin/...)
    assert Path(sys.executable).with_name("a2a-serverless").exists()
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) if on_path else "/usr/bin:/bin")

    # When a command line is printed for it, Then it names the command as that shell can run it
    line = command_line("push-redrive", "--queue-url", "http://127.0.0.1:1/q one")
    assert line.split(" ", 1) == [" ".join(head), "push-redrive --queue-url 'http://127.0.0.1:1/q one'"]


def test_push_redrive_signs_for_the_local_stack_with_its_test_key_never_yours(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given your own AWS credentials in the environment, and a stand-in for the local stack's moto
    # on a loopback address that records how each request was signed
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAYOURSYOURSYOURS")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "your-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-3")
    signed: list[str] = []

    async def sqs(request: Request) -> Response:
        signed.append(request.headers.get("authorization", ""))
        return JSONResponse({"__type": "AWS.SimpleQueueService.NonExistentQueue", "message": "no such queue"}, 400)

    with served(Starlette(routes=[Route("/", sqs, methods=["POST"])])) as endpoint:
        # When push-redrive is pointed at it
        code = cli.main(["push-redrive", "--endpoint-url", endpoint, "--queue-url", "q", "--dead-letter-url", "d"])

    # Then it signed with the local stack's test key and region, and said the error in one line
    assert signed
    assert all("Credential=testing/" in header and "/us-east-1/sqs/" in header for header in signed), signed
    assert code == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("a2a-serverless push-redrive: error: ")


def test_push_redrive_with_a_profile_that_does_not_exist_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AWS_PROFILE", "no-such-profile")

    code = cli.main(["push-redrive", "--queue-url", "q", "--dead-letter-url", "d"])

    assert code == 1
    assert capsys.readouterr().err.splitlines() == [
        "a2a-serverless push-redrive: error: The config profile (no-such-profile) could not be found"
    ]
