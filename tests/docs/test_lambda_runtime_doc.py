"""docs/lambda-runtime.md runs as written: its bash blocks marked ``<!-- runs-in-ci -->`` (or
``<!-- runs-in-ci: prints TEXT -->``: the block's output must hold TEXT), in order, in one bash
(a block's variables and ``PATH`` are the next one's), with ``set -euo pipefail``.

They run from a copy of the checkout: a directory of links to its top-level entries, without its
``.aws-sam``, so the doc's ``.venv/bin/...``, ``.venv-sam/bin/sam``, ``make docker`` and
``infra/lambda-image/sam-local`` are the checkout's, while what the blocks write (``.aws-sam/``,
``event.json``, ``env.json``) stays in the copy. Where ``make test`` runs them, ``make docker`` has
run first; without Docker the test is skipped, and in CI (``CI=true``) it fails, as
tests/lambda_runtime's do.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

pytestmark = pytest.mark.lambda_runtime

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "lambda-runtime.md"
MARK = re.compile(r"<!-- runs-in-ci(?:: prints (?P<prints>.+?))? -->\n+```bash\n(?P<code>.*?)```", re.DOTALL)
SEPARATOR = "=== end of a doc block ==="
# What the doc's blocks leave on the machine, removed however the run ended.
CLEANUP = "docker rm -f moto > /dev/null 2>&1; docker network rm a2a-local > /dev/null 2>&1; true"


@dataclass(frozen=True)
class Block:
    line: int
    code: str
    prints: str | None


def blocks(text: str) -> list[Block]:
    return [
        Block(text.count("\n", 0, found.start()) + 1, found["code"], found["prints"]) for found in MARK.finditer(text)
    ]


def unavailable(reason: str) -> NoReturn:
    """Skip locally, fail in CI (as tests/lambda_runtime/conftest.py's)."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (in CI, make docker must have provided it)", pytrace=False)
    pytest.skip(reason)


def test_the_doc_marks_its_first_run_and_the_sam_local_walk_through_as_run_in_ci() -> None:
    found = blocks(DOC.read_text())
    assert len(found) >= 6
    assert "infra/lambda-image/sam-local invoke AgentCardFunction" in found[0].code
    assert any(block.prints == "TASK_STATE_COMPLETED" for block in found)


def copy_of_the_checkout(directory: Path) -> Path:
    for entry in ROOT.iterdir():
        if entry.name not in (".aws-sam", ".git", "env.json", "event.json"):
            (directory / entry.name).symlink_to(entry)
    return directory


def test_the_docs_blocks_run_as_written(tmp_path: Path) -> None:
    # Given Docker, the SAM CLI and the Lambda image (make docker)
    if shutil.which("docker") is None:
        unavailable("Docker is not installed: `make docker` installs Debian's docker.io and starts dockerd")
    if subprocess.run(["docker", "info"], capture_output=True, timeout=60).returncode != 0:
        unavailable("no Docker engine answers: `make docker` starts dockerd")
    if not (ROOT / ".venv-sam" / "bin" / "sam").exists():
        unavailable("no SAM CLI in .venv-sam: `make docker` installs it")
    found = blocks(DOC.read_text())
    script = ["set -euo pipefail"]
    for block in found:
        script += [f"# docs/lambda-runtime.md, line {block.line}", block.code, f"echo '{SEPARATOR}'"]
    workdir = copy_of_the_checkout(tmp_path)

    # When its marked blocks run, in order, in one shell
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "SAM_"))} | {"SAM_CLI_TELEMETRY": "0"}
    try:
        run = subprocess.run(
            ["bash", "-c", "\n".join(script)],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=1200,
        )
    finally:
        subprocess.run(["bash", "-c", CLEANUP], capture_output=True, check=False)

    # Then every block succeeded, and printed what the doc says it prints
    outputs = run.stdout.split(SEPARATOR)
    done = len(outputs) - 1
    failed = f"the block at line {found[done].line} failed" if done < len(found) else "the cleanup failed"
    assert run.returncode == 0, f"{failed}:\n{run.stdout[-3000:]}\n{run.stderr[-5000:]}"
    for block, output in zip(found, outputs, strict=False):
        if block.prints:
            assert block.prints in output, f"line {block.line}: no {block.prints!r} in:\n{output[-3000:]}"
