"""``a2a-serverless init DIR``: an agent project of the user's own, outside this repository.

The project holds the user's code and settings, and the kit it was made with:

* ``src/<package>/agent.py``: the executor to edit, and ``src/agent.json``, its card (name,
  description, version, skills). ``src/`` is the functions' code (``CodeUri``), so on Lambda the card
  is ``/var/task/agent.json``; the local stack maps that path to ``src/``.
* ``kit/``: the installed kit packed as a wheel (:mod:`._kit_wheel`; the kit is not on PyPI yet)
  and ``requirements.txt``, which the core layer is built from: ``--find-links .`` (pip reads it
  relative to the requirements file, so ``sam build`` finds the wheel from any directory, and in a
  clone anywhere) and the kit pinned to the wheel's version. ``--kit REQUIREMENT`` names another
  kit instead (an index's), and then no wheel is written. ``upgrade_kit`` (``init --upgrade-kit``)
  replaces the wheel and the pins with the installed kit. ``layer/`` builds the core layer from it
  (the kit's own ``shared/layer/``: ``sam build`` runs the Makefile of the ``Architecture``).
* ``template.yaml``: the kit's own template (shipped in the package), with the functions' code
  ``src/``, the core layer built from ``kit/``, and the parameters' defaults naming the project's
  executor, agent and card. The handlers are the kit's (``a2a_serverless.functions.<name>.handler``,
  from the layer), never copies.
* ``samconfig.toml``, ``tests/test_agent.py`` (the agent on the in-memory runtime, through
  :mod:`.testing`), ``pyproject.toml`` (the kit with ``[dev]`` for the project's own venv, pinned as
  in ``kit/requirements.txt``), ``.gitignore`` and a README whose first two commands run the agent
  locally and test it.

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

from . import _project_files as files
from ._kit_wheel import DIST, KitWheel, pack_kit_wheel
from ._project_frameworks import FRAMEWORK_MODULES, FRAMEWORKS
from ._project_frameworks import TEST as FRAMEWORK_TEST

__all__ = ["Created", "ProjectError", "create_project", "project_template", "python_for_sam", "upgrade_kit"]

SAM_PYTHON = "python3.13"
"""The functions' runtime (``python3.13`` in the template): ``sam build`` runs this interpreter."""

LAYER_BUILD = ("layer.mk", "build.py", "arm64/Makefile", "x86_64/Makefile")
"""The core layer's build (``kit/layer/``; ``sam build`` runs the Makefile of the architecture)."""

_KIT_LINE = re.compile(r"^(a2a[-_.]serverless(?:\[[^\]\n]*\])?)[ \t]*(?:[=<>!~@].*)?$", re.MULTILINE | re.IGNORECASE)
"""The kit's line in ``kit/requirements.txt``: its name and extras (group 1), then any version or URL."""
_KIT_DEPENDENCY = re.compile(r'(?<!name = )"(a2a[-_.]serverless(?:\[[^\]"]*\])?)(?=[\s=<>!~@;"])[^"]*"', re.IGNORECASE)
"""The kit in ``pyproject.toml``'s dependencies, as above."""


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


def create_project(
    root: Path, *, name: str | None = None, kit: str | None = None, framework: str | None = None
) -> Created:
    """Write a new agent project into ``root`` (absent or empty), with the installed kit as a wheel in
    ``kit/``, or, given ``kit`` (a pip requirement), naming that. With ``framework`` (a name of
    :data:`._project_frameworks.FRAMEWORKS`) the agent is built on that framework, and the kit is
    required with its extra. Raises :class:`ProjectError`."""
    chosen = FRAMEWORKS.get(framework) if framework else None
    if framework and chosen is None:
        raise ProjectError(f"no framework {framework!r}: choose one of {', '.join(sorted(FRAMEWORKS))}")
    root = root.expanduser().resolve()
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise ProjectError(f"{root} exists and is not an empty directory")
    name = (name or root.name).strip()
    if not name:
        raise ProjectError("the agent needs a name (--name)")
    package = _package_name(name)
    executor = f"{package}.agent:executor" if chosen else f"{package}.agent:Agent"
    stack = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:100] or "agent"
    if not stack[0].isalpha():
        stack = f"a2a-{stack}"
    template = project_template(_kit_text("template.yaml"), name=name, executor=executor)
    if kit is None:
        wheel = _pack(root / "kit")
        requirement, source, about_kit = f"{DIST}=={wheel.version}", files.WHEEL_SOURCE, files.KIT_WHEEL
    else:
        requirement, source, about_kit = kit, "", files.KIT_REQUIREMENT.format(requirement=kit)
    extras = [chosen.extra] if chosen else []
    requirement = _with_extras(requirement, extras)
    agent = (chosen.agent if chosen else files.AGENT).format(name=name, name_literal=repr(name))
    test = (FRAMEWORK_TEST if chosen else files.TEST).format(executor=executor, name=name)
    texts = {
        "template.yaml": template,
        "samconfig.toml": files.SAMCONFIG.format(stack=stack, executor=executor),
        "kit/requirements.txt": files.KIT_REQUIREMENTS.format(source=source, requirement=requirement),
        "src/run.sh": _kit_text("run.sh"),
        **{f"kit/layer/{name}": _kit_text(f"layer/{name}") for name in LAYER_BUILD},
        f"src/{package}/__init__.py": "",
        f"src/{package}/agent.py": agent,
        "src/agent.json": json.dumps(_card(name), indent=2) + "\n",
        "tests/conftest.py": files.CONFTEST.format(executor=executor),
        "tests/test_agent.py": test,
        "pyproject.toml": files.PYPROJECT.format(project=stack, requirement=_with_extras(requirement, ["dev"])),
        ".gitignore": files.GITIGNORE,
        "README.md": files.README.format(name=name, package=package, stack=stack, kit=about_kit),
    }
    for relative, text in texts.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "src" / "run.sh").chmod(0o755)
    return Created(root=root, name=name, package=package, executor=executor)


def upgrade_kit(root: Path) -> KitWheel:
    """Give the agent project in ``root`` the installed kit: its wheel in ``kit/`` (the old one
    removed), and its version in ``kit/requirements.txt`` and ``pyproject.toml``, whose other lines
    (extras included) stay as the user left them. Checks both before changing anything. Raises
    :class:`ProjectError`."""
    root = root.expanduser().resolve()
    requirements, pyproject = root / "kit" / "requirements.txt", root / "pyproject.toml"
    if not requirements.is_file() or not pyproject.is_file():
        raise ProjectError(f"{root} is not an agent project (it has no kit/requirements.txt or pyproject.toml)")
    texts = {path: path.read_text(encoding="utf-8") for path in (requirements, pyproject)}
    kit_line = _KIT_LINE.search(texts[requirements])
    if kit_line is None or _KIT_DEPENDENCY.search(texts[pyproject]) is None:
        where = "kit/requirements.txt" if kit_line is None else "pyproject.toml"
        raise ProjectError(f"{where} names no {DIST} requirement to upgrade")
    stale = set((root / "kit").glob("a2a_serverless-*.whl"))
    wheel = _pack(root / "kit")
    for path in stale - {wheel.path}:
        path.unlink()
    text = texts[requirements]
    if not re.search(r"^--find-links[ =]\.$", text, flags=re.MULTILINE):  # a project made with --kit
        text = text[: kit_line.start()] + files.WHEEL_SOURCE + text[kit_line.start() :]
    text = _KIT_LINE.sub(lambda m: f"{m.group(1)}=={wheel.version}", text)
    requirements.write_text(text, encoding="utf-8")
    pyproject.write_text(
        _KIT_DEPENDENCY.sub(lambda m: f'"{m.group(1)}=={wheel.version}"', texts[pyproject]), encoding="utf-8"
    )
    return wheel


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
        # ... and the tracing layer beside it, from the same requirement (its tracing extra)
        (r"^(\s+ContentUri: )shared/$", r"\1kit/", 2),
        (r"^(\s+ContextPath: !Sub )shared/layer/", r"\1kit/layer/", 2),
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


def _pack(directory: Path) -> KitWheel:
    try:
        return pack_kit_wheel(directory)
    except metadata.PackageNotFoundError as exc:
        raise ProjectError(f"{DIST} is not installed; give the kit's requirement with --kit") from exc


def _kit_text(name: str) -> str:
    return (resources.files("a2a_serverless_dev") / "kit" / name).read_text(encoding="utf-8")


def _package_name(name: str) -> str:
    package = re.sub(r"[^0-9a-zA-Z]+", "_", name).strip("_").lower()
    if not package or package[0].isdigit():
        package = f"agent_{package}"
    if package in {"a2a_serverless", "a2a_serverless_dev", "a2a", "test", "tests", "src"} | FRAMEWORK_MODULES:
        package = f"{package}_agent"
    return package


def _with_extras(requirement: str, extras: list[str]) -> str:
    """The kit's requirement with ``extras`` added to its own (``[dev]``, the local stack, for the
    project's own venv; a framework's)."""
    match = re.match(r"^\s*([A-Za-z0-9_.-]+)\s*(?:\[([^\]]*)\])?(.*)$", requirement)
    if not extras or match is None:
        return requirement
    names = [n.strip() for n in (match.group(2) or "").split(",") if n.strip()]
    names += [extra for extra in extras if extra not in names]
    rest = match.group(3)
    return f"{match.group(1)}[{','.join(names)}]{' ' if rest.lstrip().startswith('@') else ''}{rest.strip()}"


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
