"""Check what ``sam build`` produced, offline: every function's handler resolves to code in its
built directory or its layers; each built layer holds the kit and every runtime dependency it
declares, ships nothing that never runs on Lambda (the local stack, test tools), carries binaries
of its architecture only, and bytecode for the runtime's Python that the runtime uses as it is;
and what each function deploys with (its code plus its layers, unzipped) stays within Lambda's
limit.

    python -m a2a_serverless_dev.build_check .aws-sam/build [--python python3.13] [--json sizes.json]

Exit status 1 with one line per problem; otherwise a table of sizes. Nothing of the layer is
imported here (its binaries are for the Lambda platform): modules are checked by parsing, and the
bytecode by the runtime's Python (3.13), which alone knows its magic number and source hashes.
"""

from __future__ import annotations

import argparse
import ast
import email
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

from a2a_serverless.json_types import Json, JsonValue

from .kit.layer import build as layer_build
from .project import ProjectError, python_for_sam
from .resources import load_template

__all__ = ["LayerReport", "check_build", "main", "runtime_python"]

UNZIPPED_LIMIT_BYTES = 250 * 1024 * 1024  # Lambda: function code and all its layers, unzipped

# What the layer leaves out (what the Lambda runtime carries; console scripts), and the wheels'
# machine names per architecture, are the layer build's own (shared/layer/build.py, shipped beside
# the kit's template as kit/layer/build.py). The layer takes only the runtime package of the kit's
# distribution, so this developer kit (the local stack, the console) is never in it.
RUNTIME_PROVIDED: frozenset[str] = layer_build.RUNTIME_PROVIDED
NOT_SHIPPED: tuple[str, ...] = ("a2a_serverless_dev", *layer_build.NOT_SHIPPED)
MACHINES: dict[str, str] = layer_build.ARCHITECTURES

BESIDE_CORE = {"TracingLayer": "tracing"}
"""Layers that go beside the core layer (``build.py --adds EXTRA``): the extra's distributions that
the core layer does not hold, and neither the kit nor anything the core layer holds."""

TOOLS = frozenset({"moto", "pytest", "hypothesis", "aws-durable-execution-sdk-python-testing", "schemathesis"})
"""Distributions of the local stack and the tests: never in a layer."""

# Run by the runtime's Python: every module under argv[1] must have bytecode in __pycache__ for this
# interpreter, hash-based and unchecked (PEP 552 flags 0b01), of the module's current source.
_BYTECODE_CHECK = """
import importlib.util, json, pathlib, sys
root, problems, modules = pathlib.Path(sys.argv[1]), [], 0
for source in sorted(root.rglob("*.py")):
    relative = source.relative_to(root)
    if any(part.endswith((".dist-info", ".data")) for part in relative.parts):
        continue
    modules += 1
    cached = pathlib.Path(importlib.util.cache_from_source(str(source)))
    data = cached.read_bytes() if cached.is_file() else b""
    if not data:
        problems.append(f"{relative} has no bytecode for this Python ({cached.name})")
    elif data[:4] != importlib.util.MAGIC_NUMBER:
        problems.append(f"{relative}: its bytecode is for another Python (magic {data[:4].hex()})")
    elif int.from_bytes(data[4:8], "little") != 0b01:
        problems.append(f"{relative}: its bytecode is not unchecked-hash (PEP 552 flags {data[4:8].hex()})")
    elif data[8:16] != importlib.util.source_hash(source.read_bytes()):
        problems.append(f"{relative}: its bytecode is of another source")
print(json.dumps({"modules": modules, "problems": problems}))
"""


@dataclass(frozen=True, slots=True)
class LayerReport:
    unzipped: int
    zipped: int
    py: int
    pyc: int


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _zipped_size(path: Path) -> int:
    """The size of ``path`` zipped as ``sam package`` uploads it (deflated)."""
    with tempfile.TemporaryDirectory() as scratch:
        archive = Path(scratch) / "layer.zip"
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
            for file in sorted(p for p in path.rglob("*") if p.is_file()):
                zipped.write(file, file.relative_to(path))
        return archive.stat().st_size


def _strings(value: JsonValue) -> list[str]:
    """The values a property may take: itself, or each branch of an ``Fn::If``."""
    if isinstance(value, dict) and "Fn::If" in value:
        return [s for branch in value["Fn::If"][1:] for s in _strings(branch)]
    return [value] if isinstance(value, str) else []


def _refs(value: JsonValue) -> list[str]:
    """The logical ids a layer list, or one of its entries, may name (``!Ref``, possibly under an
    ``Fn::If``)."""
    if isinstance(value, list):
        return [r for entry in value for r in _refs(entry)]
    if isinstance(value, dict) and "Fn::If" in value:
        return [r for branch in value["Fn::If"][1:] for r in _refs(branch)]
    if isinstance(value, dict) and isinstance(value.get("Ref"), str):
        return [value["Ref"]]
    return []


def _handler_problem(code_dir: Path, layers: list[Path], handler: str) -> str | None:
    """Whether Lambda would find ``handler``: a script in the code, or a module in the code or in
    a layer's ``python/`` (the kit's entry points are in the core layer)."""
    if handler.endswith(".sh"):  # the gateway: a script the Lambda Web Adapter runs
        script = code_dir / handler
        return None if script.is_file() else f"{handler} is missing"
    module, _, attr = handler.rpartition(".")
    relative = module.replace(".", "/") + ".py"
    found = [root / relative for root in [code_dir, *(layer / "python" for layer in layers)]]
    source = next((path for path in found if path.is_file()), None)
    if source is None:
        return f"module {module} is missing"
    tree = ast.parse(source.read_text(encoding="utf-8"))
    names = {
        t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)
    }
    for node in tree.body:
        if isinstance(node, ast.ImportFrom | ast.Import):
            names |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
    return None if attr in names else f"{module} defines no {attr}"


def _requirement_names(requirements: Path) -> list[str]:
    names = []
    for line in requirements.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):  # an option (--find-links .), not a requirement
            names.append(layer_build.parse_requirement(line)[0])
    return names


def _distributions(python: Path) -> dict[str, Path]:
    """The layer's installed distributions: normalized name -> its .dist-info directory."""
    return {layer_build.normalized(p.name.split("-")[0]): p for p in python.glob("*.dist-info")}


def _kit_requirements(installed: dict[str, Path], extra: str = "") -> list[str]:
    """The kit's base dependencies (its METADATA's Requires-Dist without an extra), but what the
    runtime carries; or, given ``extra``, the ones that extra names."""
    kit = installed.get("a2a-serverless")
    if kit is None or not (kit / "METADATA").is_file():
        return []
    metadata = email.message_from_string((kit / "METADATA").read_text(encoding="utf-8"))
    requirements = [layer_build.parse_requirement(r) for r in metadata.get_all("Requires-Dist") or []]
    if extra:
        return [name for name, _, for_extras in requirements if extra in for_extras]
    return [name for name, _, for_extras in requirements if not for_extras and name not in RUNTIME_PROVIDED]


def _beside_core_problems(python: Path, extra: str, core: Path | None) -> list[str]:
    """A layer beside the core one: the extra's distributions, none of the core layer's, no kit."""
    installed = _distributions(python)
    core_installed = _distributions(core) if core is not None else {}
    problems = ["the kit is in the layer: it belongs in the core layer"] if (python / "a2a_serverless").exists() else []
    for name in _kit_requirements(core_installed, extra):
        if name in core_installed:
            problems.append(f"{name} (the kit's {extra} extra) is in the core layer, which it would make bigger")
        elif name not in installed:
            problems.append(f"{name} (the kit's {extra} extra) is not installed in the layer")
    problems += [f"{name} is in the core layer too" for name in sorted(installed.keys() & core_installed.keys())]
    return problems


def _layer_problems(python: Path, architecture: str | None, requirements: Path | None) -> list[str]:
    problems = [] if (python / "a2a_serverless" / "__init__.py").is_file() else ["a2a_serverless is not in the layer"]
    installed = _distributions(python)
    if "a2a-serverless" not in installed:
        problems.append(
            "the kit is not installed in the layer (no a2a_serverless-*.dist-info): its dependencies are unknown"
        )
    wanted = [(n, "the kit's dependency") for n in _kit_requirements(installed)]
    if requirements is not None:
        wanted += [(n, str(requirements)) for n in _requirement_names(requirements)]
    problems += [f"{n} ({source}) is not installed in the layer" for n, source in wanted if n not in installed]
    return problems + _shipping_problems(python, architecture)


def _shipping_problems(python: Path, architecture: str | None) -> list[str]:
    """What no layer may hold: what never runs on Lambda, binaries of another architecture."""
    installed = _distributions(python)
    problems = [f"{path} is in the layer: it never runs on Lambda" for path in NOT_SHIPPED if (python / path).exists()]
    problems += [
        f"{name} is in the layer: a tool of the tests or the local stack" for name in sorted(TOOLS & installed.keys())
    ]
    machine = MACHINES.get(architecture or "", architecture)
    for name, dist_info in sorted(installed.items()):
        platforms = _platforms(dist_info) - {"any"}
        if machine and platforms and not all(p.endswith(f"_{machine}") for p in platforms):
            problems.append(f"{name} is built for {', '.join(sorted(platforms))}, the layer for {architecture}")
    return problems


def _platforms(dist_info: Path) -> set[str]:
    """The platforms of a distribution's wheel tags (``Tag: cp313-cp313-manylinux_2_17_x86_64``)."""
    wheel = dist_info / "WHEEL"
    lines = wheel.read_text(encoding="utf-8").splitlines() if wheel.is_file() else []
    return {line.rsplit("-", 1)[-1].strip() for line in lines if line.startswith("Tag:")}


def _bytecode_problems(python: Path, runtime_python: Path | None) -> tuple[list[str], int]:
    """Problems of the layer's bytecode, checked by the runtime's Python, and the module count."""
    if runtime_python is None:
        return ["no Python 3.13 (the runtime's) to check the bytecode with: --python"], 0
    result = subprocess.run(
        [str(runtime_python), "-I", "-c", _BYTECODE_CHECK, str(python)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if result.returncode != 0:
        return [f"the bytecode check failed: {result.stderr.strip()[-500:]}"], 0
    found = json.loads(result.stdout)
    return list(found["problems"]), int(found["modules"])


def check_build(
    build_dir: Path, *, runtime_python: Path | None, requirements: Path | None = None
) -> tuple[list[str], dict[str, dict[str, int]], dict[str, LayerReport]]:
    """Problems found; per function its code, layer and total unzipped sizes in bytes; per built
    layer its unzipped and zipped sizes and its counts of modules and bytecode files."""
    built = load_template(build_dir / "template.yaml")
    resources: Json = built["Resources"]
    globals_: Json = built.get("Globals", {}).get("Function", {})
    problems: list[str] = []
    layers = {
        k: build_dir / str(v["Properties"]["ContentUri"])
        for k, v in resources.items()
        if v["Type"] == "AWS::Serverless::LayerVersion"
    }
    reports: dict[str, LayerReport] = {}
    core = layers.get("CoreLayer")
    for layer_id, layer in layers.items():
        python = layer / "python"
        architecture = resources[layer_id].get("Metadata", {}).get("BuildArchitecture")
        if layer_id in BESIDE_CORE:
            core_python = core / "python" if core is not None else None
            found = _beside_core_problems(python, BESIDE_CORE[layer_id], core_python)
            found += _shipping_problems(python, architecture)
        else:
            found = _layer_problems(python, architecture, requirements)
        bytecode, modules = _bytecode_problems(python, runtime_python)
        problems += [f"{layer_id}: {p}" for p in [*found, *bytecode]]
        pyc = sum(1 for _ in python.rglob("__pycache__/*.pyc"))
        reports[layer_id] = LayerReport(_size(layer), _zipped_size(layer), modules, pyc)
    sizes: dict[str, dict[str, int]] = {}
    for function_id, resource in sorted(resources.items()):
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        props = {**globals_, **resource["Properties"]}
        # SAM appends a function's list of layers to the Globals' (lists merge); an intrinsic (an
        # Fn::If of lists) replaces it.
        own: JsonValue = resource["Properties"].get("Layers", [])
        shared: JsonValue = globals_.get("Layers", [])
        entries = own if isinstance(own, dict) else [*(shared if isinstance(shared, list) else [shared]), *own]
        code_dir = build_dir / str(props["CodeUri"])
        own_layers = [layers[ref] for ref in dict.fromkeys(_refs(entries)) if ref in layers]
        for handler in _strings(props["Handler"]):
            problem = _handler_problem(code_dir, own_layers, handler)
            if problem:
                problems.append(f"{function_id}: {problem}")
        code, layer_bytes = _size(code_dir), sum(_size(layer) for layer in own_layers)
        sizes[function_id] = {"code": code, "layers": layer_bytes, "total": code + layer_bytes}
        if code + layer_bytes > UNZIPPED_LIMIT_BYTES:
            problems.append(f"{function_id}: {code + layer_bytes} bytes unzipped, over Lambda's 250 MB")
    return problems, sizes, reports


def runtime_python(given: str | None = None) -> Path | None:
    """The runtime's Python (3.13): ``given``, else as ``sam build`` finds it (``python_for_sam``)."""
    if given:
        return Path(given)
    try:
        directory = python_for_sam(os.environ)
    except ProjectError:
        return None
    found = shutil.which("python3.13") if directory is None else str(directory / "python3.13")
    return Path(found) if found else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m a2a_serverless_dev.build_check", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("build_dir", type=Path)
    parser.add_argument("--python", help="the runtime's Python (3.13), to check the bytecode with")
    parser.add_argument("--requirements", type=Path, help="a requirements file whose names the layer must hold")
    parser.add_argument("--json", type=Path, help="write the sizes as JSON")
    args = parser.parse_args(argv)
    problems, sizes, layers = check_build(
        args.build_dir, runtime_python=runtime_python(args.python), requirements=args.requirements
    )
    for problem in problems:
        sys.stderr.write(f"build check: {problem}\n")
    sys.stdout.write(f"{'function':28} {'code KB':>9} {'layers MB':>10} {'total MB':>9}\n")
    for function_id, size in sizes.items():
        sys.stdout.write(
            f"{function_id:28} {size['code'] / 1024:9.0f} {size['layers'] / 2**20:10.1f} {size['total'] / 2**20:9.1f}\n"
        )
    for layer_id, layer in layers.items():
        sys.stdout.write(
            f"{layer_id}: {layer.unzipped / 2**20:.1f} MB unzipped, {layer.zipped / 2**20:.1f} MB zipped, "
            f"{layer.py} modules, {layer.pyc} bytecode files\n"
        )
    if args.json:
        report = {"functions": sizes, "layers": {k: asdict(v) for k, v in layers.items()}}
        args.json.write_text(json.dumps(report, indent=2))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
