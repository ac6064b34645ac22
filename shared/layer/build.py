"""Build the core Lambda layer: the kit and what it needs at run time, for the functions' Python
(3.13) and architecture, with its bytecode.

The layer's Makefile (``BuildMethod: makefile``: ``sam build`` runs it) calls it with Python 3.13:

    python3.13 build.py --architecture arm64 --target "$ARTIFACTS_DIR/python" (--checkout DIR | -r FILE)

``--checkout``: the kit's own checkout (its ``pyproject.toml``), with ``--extras`` if any; ``-r``: a
requirements file naming the kit (an agent project's ``kit/requirements.txt``). Standard library
only: it runs before anything is installed.

``--adds EXTRAS`` builds a layer that goes *beside* the core layer (the tracing layer:
``--adds tracing``): what the kit with these extras installs beyond what the core layer (the same
source and ``--extras``) installs, so that a template parameter can attach it or not. pip resolves
both; a distribution the two resolve to different files is an error (the layers share
``/opt/python``).

1. pip resolves what to install for Lambda (``--dry-run --report``): manylinux wheels of the
   architecture for CPython 3.13, binaries only; the kit with its base dependencies (and the
   extras asked for, if any), so the layer's requirements are ``pyproject.toml``'s, never a list
   kept by hand.
2. What the Lambda runtime carries is left out: boto3, and what nothing but boto3 needs
   (botocore, s3transfer, ...). The python3.13 runtime has it on the path after the layers.
3. pip installs the rest with ``--no-deps``, from the very files it resolved. Of the kit's own
   distribution the layer takes the runtime package, ``a2a_serverless``, as it is, and its
   metadata: the developer kit (``a2a_serverless_dev``: the local stack, the console, ``init``,
   the CLI) is a package of its own that never runs on Lambda. The console scripts (``bin/``) go.
4. Every module is compiled into ``__pycache__/<name>.cpython-313.pyc`` with PEP 552's
   unchecked-hash invalidation: Lambda's ``/opt`` is read-only, so the runtime cannot keep what it
   compiles (every cold start would compile the layer again), and a zip keeps no file times, which
   timestamp-checked bytecode depends on. The runtime uses unchecked bytecode as it is.
"""

from __future__ import annotations

import argparse
import compileall
import json
import py_compile
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

PYTHON = (3, 13)
"""The functions' runtime (``python3.13`` in the template)."""

ARCHITECTURES = {"arm64": "aarch64", "x86_64": "x86_64"}
"""Lambda's architecture names -> the wheels' machine names."""

GLIBC_MINORS = range(34, 16, -1)
"""manylinux_2_34 down to manylinux_2_17 (manylinux2014): the python3.13 runtime is Amazon Linux
2023, glibc 2.34."""

RUNTIME_PROVIDED = frozenset({"boto3", "botocore"})
"""Distributions the Lambda runtime carries, left out with what only they need (unless asked for
by name)."""

KIT = "a2a-serverless"
"""The kit's distribution (normalized name)."""

RUNTIME_PACKAGE = "a2a_serverless"
"""What the layer takes of the kit's distribution: the runtime package (and its metadata)."""

NOT_SHIPPED = ("bin",)
"""The console scripts: never run on Lambda."""

LAYER_ROOT = "/opt/python"
"""Where Lambda mounts the layer's ``python/``: the path the bytecode names its sources by."""


class BuildError(RuntimeError):
    """The layer cannot be built; the message says why, in one line."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--architecture", choices=sorted(ARCHITECTURES), required=True)
    parser.add_argument("--target", type=Path, required=True, help="the layer's python/ directory")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--checkout", type=Path, help="the kit's checkout (the directory of pyproject.toml)")
    source.add_argument("-r", "--requirements", type=Path, help="a requirements file naming the kit")
    parser.add_argument("--extras", default="", help="the checkout's extras to install too (comma-separated)")
    parser.add_argument(
        "--adds", default="", help="extras: build only what they add to the core layer (a layer beside it)"
    )
    args = parser.parse_args(argv)
    try:
        build(
            args.target,
            args.architecture,
            checkout=args.checkout,
            requirements=args.requirements,
            extras=args.extras,
            adds=args.adds,
        )
    except BuildError as exc:
        sys.stderr.write(f"layer build: {exc}\n")
        return 1
    return 0


def build(
    target: Path,
    architecture: str,
    *,
    checkout: Path | None,
    requirements: Path | None,
    extras: str = "",
    adds: str = "",
) -> None:
    if sys.version_info[:2] != PYTHON:
        raise BuildError(f"run it with Python {'.'.join(map(str, PYTHON))} (the functions' runtime), not {sys.version}")
    with tempfile.TemporaryDirectory(prefix="a2a-layer-") as scratch:
        work = Path(scratch)
        source = _copy_checkout(checkout, work / "kit") if checkout is not None else None
        platform = _platform_options(architecture)

        def resolve(asked: str, name: str) -> dict[str, str]:
            report = work / f"{name}.json"
            roots = _roots(source, requirements, asked)
            _pip("install", "--dry-run", "--ignore-installed", "--report", str(report), *platform, *roots)
            return shipped(json.loads(report.read_text(encoding="utf-8"))["install"])

        wanted = resolve(extras, "core")
        if adds.strip():
            wanted = added(resolve(",".join(e for e in (extras, adds) if e.strip()), "with-adds"), wanted)
        staging = work / "python"
        others = [requirement for name, requirement in wanted.items() if name != KIT]
        if others:
            _pip("install", "--no-deps", "--no-compile", "--target", str(staging), *platform, *others)
        if KIT in wanted:
            kit = work / "kit-install"
            _pip("install", "--no-deps", "--no-compile", "--target", str(kit), *platform, wanted[KIT])
            _take_runtime(kit, staging)
        for relative in NOT_SHIPPED:
            _remove(staging, relative)
        compile_tree(staging)
        if target.exists():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(staging, target)


def _roots(source: Path | None, requirements: Path | None, extras: str) -> list[str]:
    """What pip resolves: the kit's copied checkout with ``extras``, or the requirements file (and
    the kit with ``extras``, which pip merges with the file's line for it)."""
    kit = f"a2a-serverless[{extras}]" if extras.strip() else "a2a-serverless"
    if source is not None:
        return [f"{kit} @ {source.as_uri()}"]
    assert requirements is not None
    return ["-r", str(requirements.resolve()), *([kit] if extras.strip() else [])]


def added(full: dict[str, str], core: dict[str, str]) -> dict[str, str]:
    """What ``full`` installs beyond ``core``. A distribution both hold must be the same file: the
    layers are unpacked into one ``/opt/python``, and a second copy would overwrite the first."""
    for name in sorted(full.keys() & core.keys()):
        if full[name] != core[name]:
            raise BuildError(f"{name} resolves to {full[name]} with the extras but {core[name]} in the core layer")
    return {name: full[name] for name in sorted(full.keys() - core.keys())}


def shipped(install: list[dict[str, Any]]) -> dict[str, str]:
    """The requirements to install (by normalized name), pinned to the files pip resolved: every
    distribution of pip's report that the requested ones need (with the extras they ask for),
    except through one the runtime carries."""
    items = {normalized(item["metadata"]["name"]): item for item in install}
    extras = {name: set(map(normalized, item.get("requested_extras") or [])) for name, item in items.items()}
    kept: set[str] = set()
    todo = [name for name, item in items.items() if item.get("requested")]
    while todo:
        name = todo.pop()
        kept.add(name)
        for requirement in items[name]["metadata"].get("requires_dist") or []:
            dep, dep_extras, for_extras = parse_requirement(requirement)
            if dep in RUNTIME_PROVIDED or dep not in items or (for_extras and not for_extras & extras[name]):
                continue
            if dep not in kept or not dep_extras <= extras[dep]:
                extras[dep] |= dep_extras
                todo.append(dep)
    return {name: f"{items[name]['metadata']['name']} @ {items[name]['download_info']['url']}" for name in sorted(kept)}


def compile_tree(root: Path) -> None:
    """Bytecode for every module under ``root``, named after where Lambda mounts it."""
    compiled = compileall.compile_dir(
        root,
        quiet=1,
        workers=0,
        stripdir=str(root),
        prependdir=LAYER_ROOT,
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    )
    if not compiled:
        raise BuildError("some modules do not compile with this Python (see above)")


def _copy_checkout(checkout: Path, into: Path) -> Path:
    """What the kit's package is built from (pyproject.toml, its readme, the package under
    shared/), copied: pip builds a local directory in place, and a checkout's stale ``build/`` would
    end up in the wheel."""
    checkout = checkout.resolve()
    if not (checkout / "pyproject.toml").is_file():
        raise BuildError(f"{checkout} has no pyproject.toml")
    into.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(checkout / name, into / name)
    shared = checkout / "shared"

    def ignore(directory: str, names: list[str]) -> set[str]:
        here = Path(directory) == shared
        return {n for n in names if n == "__pycache__" or n.endswith((".pyc", ".egg-info")) or (here and n == "layer")}

    shutil.copytree(shared, into / "shared", ignore=ignore)
    return into


def _platform_options(architecture: str) -> list[str]:
    machine = ARCHITECTURES[architecture]
    platforms = [f"manylinux_2_{minor}_{machine}" for minor in GLIBC_MINORS] + [f"manylinux2014_{machine}"]
    return [
        *(option for platform in platforms for option in ("--platform", platform)),
        "--implementation",
        "cp",
        "--python-version",
        "".join(map(str, PYTHON)),
        "--only-binary=:all:",
    ]


def _pip(*args: str) -> None:
    quiet = ("--quiet", "--disable-pip-version-check", "--root-user-action=ignore")
    result = subprocess.run([sys.executable, "-m", "pip", *args, *quiet], check=False)  # our arguments only
    if result.returncode != 0:
        raise BuildError(f"pip {args[0]} failed (exit status {result.returncode}; its output is above)")


def _take_runtime(kit: Path, staging: Path) -> None:
    """Move the runtime package and the distribution's metadata from ``kit`` (where pip installed
    the kit's distribution) into ``staging``; its RECORD then lists only what the layer holds."""
    staging.mkdir(parents=True, exist_ok=True)
    dist_infos = list(kit.glob("a2a_serverless-*.dist-info"))
    if not (kit / RUNTIME_PACKAGE).is_dir() or len(dist_infos) != 1:
        raise BuildError(f"the kit's distribution installed no {RUNTIME_PACKAGE}/ and one dist-info")
    for path in (kit / RUNTIME_PACKAGE, dist_infos[0]):
        shutil.move(path, staging / path.name)
    record = staging / dist_infos[0].name / "RECORD"
    taken = (f"{RUNTIME_PACKAGE}/", f"{dist_infos[0].name}/")
    lines = record.read_text(encoding="utf-8").splitlines(keepends=True)
    record.write_text("".join(line for line in lines if line.startswith(taken)), encoding="utf-8")


def _remove(root: Path, relative: str) -> None:
    """Remove ``root/relative`` and its lines from the RECORD of the distribution that installed it."""
    path = root / relative
    if path.is_dir():
        shutil.rmtree(path)
    for record in root.glob("*.dist-info/RECORD"):
        lines = record.read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [line for line in lines if not line.startswith((f"{relative}/", f"../../{relative}/"))]
        if kept != lines:
            record.write_text("".join(kept), encoding="utf-8")


def normalized(name: str) -> str:
    """A distribution's or an extra's normalized name (PEP 503, PEP 685)."""
    return re.sub(r"[-_.]+", "-", name.strip()).lower()


def parse_requirement(requirement: str) -> tuple[str, set[str], set[str]]:
    """A Requires-Dist line: the distribution, the extras it asks of it, and the extras of the
    dependent it is for (empty: always)."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?", requirement)
    if match is None:
        raise BuildError(f"cannot read the requirement {requirement!r}")
    asked = {normalized(e) for e in (match.group(2) or "").split(",") if e.strip()}
    marker = requirement.partition(";")[2]
    for_extras = {normalized(e) for e in re.findall(r"""\bextra\s*==\s*['"]([^'"]+)['"]""", marker)}
    return normalized(match.group(1)), asked, for_extras


if __name__ == "__main__":
    sys.exit(main())
