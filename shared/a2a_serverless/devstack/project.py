"""``a2a-serverless init DIR``: an agent project of the user's own, outside this repository.

The project holds only the user's code and settings; the kit comes from the installed package:

* ``src/<package>/agent.py``: the executor to edit, and ``src/agent.json``, its card (name,
  description, version, skills). ``src/`` is the functions' code (``CodeUri``), so on Lambda the card
  is ``/var/task/agent.json``; the local stack maps that path to ``src/``.
* ``template.yaml``: the kit's own template (shipped in the package), with the functions' code
  ``src/``, the core layer built from ``kit/requirements.txt`` (one line: the kit, as a pip
  requirement), and the parameters' defaults naming the project's executor, agent and card. The
  handlers are the kit's (``a2a_serverless.functions.<name>.handler``, from the layer), never copies.
* ``samconfig.toml``, ``tests/test_agent.py`` (the agent on the in-memory runtime), ``pyproject.toml``,
  ``.gitignore`` and a README whose first two commands run the agent locally and test it.

The template is derived by replacing a few exact lines of the kit's; each must be found, so a
change of the kit's template that would make a wrong project fails here (and in its test) instead.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path
from urllib.parse import unquote, urlsplit

__all__ = ["Created", "ProjectError", "create_project", "kit_requirement", "python_for_sam"]

SAM_PYTHON = "python3.13"
"""The functions' runtime (``python3.13`` in the template): ``sam build`` runs this interpreter."""

_DIST = "a2a-serverless"


class ProjectError(ValueError):
    """The project cannot be created; the message says why, in one line."""


@dataclass(frozen=True, slots=True)
class Created:
    root: Path
    name: str
    package: str
    executor: str
    run_command: str = "a2a-serverless dev"
    test_command: str = "python -m pytest"


def create_project(root: Path, *, name: str | None = None, kit: str | None = None) -> Created:
    """Write a new agent project into ``root`` (absent or empty). Raises :class:`ProjectError`."""
    root = root.expanduser().resolve()
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise ProjectError(f"{root} exists and is not an empty directory")
    name = (name or root.name).strip()
    if not name:
        raise ProjectError("the agent needs a name (--name)")
    package = _package_name(name)
    executor = f"{package}.agent:Agent"
    stack = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:100] or "agent"
    if not stack[0].isalpha():
        stack = f"a2a-{stack}"
    requirement = kit or kit_requirement()
    files = {
        "template.yaml": project_template(_kit_text("template.yaml"), name=name, executor=executor),
        "samconfig.toml": _SAMCONFIG.format(stack=stack, executor=executor),
        "kit/requirements.txt": _KIT_REQUIREMENTS.format(requirement=requirement),
        "src/run.sh": _kit_text("run.sh"),
        f"src/{package}/__init__.py": "",
        f"src/{package}/agent.py": _AGENT.format(name=name, name_literal=repr(name)),
        "src/agent.json": json.dumps(_card(name), indent=2) + "\n",
        "tests/test_agent.py": _TEST.format(executor=executor, name=name),
        "pyproject.toml": _PYPROJECT.format(project=stack, requirement=_dev_requirement(requirement)),
        ".gitignore": _GITIGNORE,
        "README.md": _README.format(name=name, package=package, stack=stack),
    }
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "src" / "run.sh").chmod(0o755)
    return Created(root=root, name=name, package=package, executor=executor)


def project_template(kit_template: str, *, name: str, executor: str) -> str:
    """The kit's template, made the project's (see the module docstring)."""
    text = kit_template
    replacements = [
        # every function's code is the project's src/
        (r"^(\s+CodeUri: )functions/$", r"\1src/", None),
        # the core layer: the kit installed from its requirement, not a copy of its sources
        (
            r"^(\s+Description: )The a2a_serverless package and its runtime dependencies\.$",
            r"\1The a2a-serverless kit (kit/requirements.txt) and its dependencies.",
            1,
        ),
        (r"^(\s+ContentUri: )shared/$", r"\1kit/", 1),
        # the parameters' defaults: this project's agent and card
        (r"^(  ExecutorPath:\n    Type: String\n    Default: ).*$", r"\g<1>" + executor, 1),
        (r"^(  AgentName:\n    Type: String\n    Default: ).*$", r"\g<1>" + _yaml_scalar(name), 1),
        (r'^(  AgentCardFile:\n    Type: String\n    Default: )"".*$', r"\1/var/task/agent.json", 1),
    ]
    for pattern, replacement, count in replacements:
        text, found = re.subn(pattern, replacement, text, count=count or 0, flags=re.MULTILINE)
        if not found or (count is not None and found != count):
            raise ProjectError(f"the kit's template has changed: no line matches {pattern!r}")
    description = f"  {name}: an A2A agent deployed with a2a-serverless (API Gateway, Lambda, DynamoDB, SQS, S3)."
    pattern = r"^Description: >-\n(  .*\n)+"
    text, found = re.subn(pattern, f"Description: >-\n{description}\n", text, count=1, flags=re.MULTILINE)
    if not found:
        raise ProjectError("the kit's template has changed: no Description")
    return text


def kit_requirement() -> str:
    """How the deployed layer installs this kit: this checkout when the installed kit is one
    (``pip install -e``, or from a local directory), else this version from the package index."""
    try:
        distribution = metadata.distribution(_DIST)
    except metadata.PackageNotFoundError as exc:
        raise ProjectError(f"{_DIST} is not installed; give the kit's requirement with --kit") from exc
    direct = distribution.read_text("direct_url.json")
    if direct:
        info = json.loads(direct)
        url = str(info.get("url", ""))
        if url.startswith("file://") and "dir_info" in info:  # a directory (a checkout), not an archive
            return f"{_DIST} @ file://{Path(unquote(urlsplit(url).path)).resolve()}"
    return f"{_DIST}=={distribution.version}"


def python_for_sam(environ: Mapping[str, str]) -> Path | None:
    """The directory to put first on ``PATH`` so that ``sam build`` finds a real Python 3.13, or
    None when the ``python3.13`` on ``PATH`` is one. A pyenv shim of that name runs the version pyenv
    has selected (often another one), so it is skipped for pyenv's own 3.13 install."""
    found = shutil.which(SAM_PYTHON, path=environ.get("PATH", ""))
    if found is not None and _is_313(found):
        return None
    pyenv_root = Path(environ.get("PYENV_ROOT") or Path(environ.get("HOME", "~")).expanduser() / ".pyenv")
    installs = sorted(pyenv_root.glob(f"versions/3.13*/bin/{SAM_PYTHON}"))
    for candidate in reversed(installs):
        if _is_313(str(candidate)):
            return candidate.parent
    why = "is a pyenv shim for another version" if found and "/shims/" in found else "is not Python 3.13"
    raise ProjectError(
        f"sam build needs Python 3.13 (the functions' runtime) and {SAM_PYTHON} on PATH "
        f"{why if found else 'is missing'}: install it (pyenv install 3.13) or put it first on PATH"
    )


def _is_313(python: str) -> bool:
    try:
        out = subprocess.run(
            [python, "-c", "import sys; print(sys.version_info[:2] == (3, 13))"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except OSError:
        return False
    return out.stdout.strip() == "True"


def _kit_text(name: str) -> str:
    return (resources.files("a2a_serverless.devstack") / "kit" / name).read_text(encoding="utf-8")


def _package_name(name: str) -> str:
    package = re.sub(r"[^0-9a-zA-Z]+", "_", name).strip("_").lower()
    if not package or package[0].isdigit():
        package = f"agent_{package}"
    if package in {"a2a_serverless", "a2a", "test", "tests", "src"}:
        package = f"{package}_agent"
    return package


def _dev_requirement(requirement: str) -> str:
    """The kit's requirement with the [dev] extra (the local stack), for the project's own venv."""
    if " @ " in requirement:
        dist, _, url = requirement.partition(" @ ")
        return f"{dist.strip()}[dev] @ {url.strip()}"
    match = re.match(r"^([A-Za-z0-9_.-]+)(.*)$", requirement)
    return f"{match.group(1)}[dev]{match.group(2)}" if match else requirement


def _yaml_scalar(value: str) -> str:
    return json.dumps(value)  # a JSON string is a YAML scalar


def _card(name: str) -> dict[str, object]:
    return {
        "name": name,
        "description": f"{name}: replace this with what your agent does.",
        "version": "0.1.0",
        "skills": [
            {
                "id": "reply",
                "name": "Reply",
                "description": "Answers a message (edit src/ to make it do your agent's work).",
                "tags": ["example"],
                "examples": ["hello"],
            }
        ],
    }


_KIT_REQUIREMENTS = """\
# The a2a-serverless kit, installed into the core layer by `sam build` with its dependencies.
{requirement}
"""

_AGENT = '''\
"""{name}: your agent. Edit ``Agent.execute``; ``a2a-serverless dev`` serves it locally."""

from __future__ import annotations

from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.models import Part

NAME = {name_literal}


class Agent(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        text = context.get_user_input().strip()
        await updater.add_artifact([Part(text=f"{{NAME}} heard: {{text}}")], name="reply")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()
'''

_TEST = '''\
"""The agent on the in-memory runtime: the whole protocol path (HTTP+JSON binding, the operations,
the worker running your executor), no AWS, no local stack."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from a2a_serverless.config import Settings
from a2a_serverless.wiring import build_runtime
from a2a_serverless.transport.app import create_app

CARD = Path(__file__).parents[1] / "src" / "agent.json"
V1 = {{"A2A-Version": "1.0"}}


def call(method: str, path: str, body: Any = None) -> httpx.Response:
    settings = Settings(store="memory", executor="{executor}", card_file=str(CARD))
    app = create_app(build_runtime(settings))

    async def send() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://agent") as http:
            return await http.request(method, path, json=body, headers=V1)

    return asyncio.run(send())


def test_the_card_is_the_agents() -> None:
    card = call("GET", "/.well-known/agent-card.json").json()
    assert card["name"] == {name!r}
    assert [skill["id"] for skill in card["skills"]] == ["reply"]


def test_the_agent_answers() -> None:
    message = {{"messageId": "m1", "role": "ROLE_USER", "parts": [{{"text": "hello"}}]}}
    response = call("POST", "/message:send", {{"message": message}})
    assert response.status_code == 200, response.text
    task = response.json()["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"][0]["text"] == {name!r} + " heard: hello"
'''

_SAMCONFIG = """\
# Defaults for `sam build` and `sam deploy` (run `sam deploy --guided` once to adjust them).
version = 0.1

[default.global.parameters]
stack_name = "{stack}"

[default.build.parameters]
cached = true
parallel = true

[default.validate.parameters]
lint = true

[default.deploy.parameters]
capabilities = "CAPABILITY_IAM"
confirm_changeset = true
resolve_s3 = true
s3_prefix = "{stack}"
# Who may call: AWS_IAM (SigV4-signed requests only; the template's default), Jwt (with JwtIssuer and
# JwtAudience), or Open, which makes the API PUBLIC: anyone on the internet can call the agent (the
# stack's PublicApiWarning output says so). Choose Open only on purpose.
parameter_overrides = "ExecutorPath=\\"{executor}\\" AuthMode=\\"AWS_IAM\\" LogLevel=\\"INFO\\""
"""

_PYPROJECT = """\
[project]
name = "{project}"
version = "0.1.0"
requires-python = ">=3.11"
# The kit with its local stack ([dev]); the deployed functions get the kit from kit/requirements.txt.
dependencies = ["{requirement}", "pytest>=8"]

[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]
"""

_GITIGNORE = """\
.venv/
__pycache__/
*.pyc
.pytest_cache/
.aws-sam/
"""

_README = """\
# {name}

An A2A agent deployed with [a2a-serverless](https://github.com/) on AWS serverless.

```bash
a2a-serverless dev          # run it locally: the whole stack on moto, your agent, your card
python -m pytest            # test it (the agent on the in-memory runtime)
```

(In a fresh virtual environment, `pip install -e .` first: it installs the kit with its local stack.)

* `src/{package}/agent.py`: your agent (`Agent.execute`). Its card: `src/agent.json` (name,
  description, version, skills).
* `template.yaml`: the deployment (the kit's template with your code as the functions' code);
  `kit/requirements.txt` says which kit the core layer installs.
* Deploy: `a2a-serverless build && sam deploy --guided` (stack `{stack}`). `build` is `sam build`
  with a real Python 3.13. Who may call it is `AuthMode`: `AWS_IAM` by default (SigV4-signed
  requests only), `Jwt` (your issuer and audience), or `Open`, which makes the agent public to
  anyone on the internet.
"""
