"""Check what ``sam build`` produced, offline: every function's handler resolves to code in its
built directory, the core layer carries the package and every runtime dependency, and the sizes
each function deploys with (its code plus its layers, unzipped) stay within Lambda's limit.

    python -m a2a_serverless.devstack.build_check .aws-sam/build [--json sizes.json]

Exit status 1 with one line per problem; otherwise a table of sizes. (The built layer holds arm64
wheels for the Lambda runtime, so nothing in it is imported here: modules are checked by parsing.)
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

from ..json_types import Json
from .resources import load_template

__all__ = ["check_build", "main"]

UNZIPPED_LIMIT_BYTES = 250 * 1024 * 1024  # Lambda: function code and all its layers, unzipped


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


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
            names.append(re.split(r"[<>=!~\[; ]", line, maxsplit=1)[0])
    return names


def _layer_problems(layer: Path, requirements: Path) -> list[str]:
    python = layer / "python"
    problems = [] if (python / "a2a_serverless" / "__init__.py").is_file() else ["a2a_serverless is not in the layer"]
    installed = {re.sub(r"[-_.]+", "-", p.name.split("-")[0]).lower() for p in python.glob("*.dist-info")}
    for name in _requirement_names(requirements):
        if re.sub(r"[-_.]+", "-", name).lower() not in installed:
            problems.append(f"{name} (shared/requirements.txt) is not installed in the layer")
    return problems


def check_build(build_dir: Path, requirements: Path) -> tuple[list[str], dict[str, dict[str, int]]]:
    """Problems found, and per function its code, layer and total unzipped sizes in bytes."""
    built = load_template(build_dir / "template.yaml")
    resources: Json = built["Resources"]
    globals_: Json = built.get("Globals", {}).get("Function", {})
    problems: list[str] = []
    layers = {
        k: build_dir / str(v["Properties"]["ContentUri"])
        for k, v in resources.items()
        if v["Type"] == "AWS::Serverless::LayerVersion"
    }
    for layer_id, layer in layers.items():
        problems += [f"{layer_id}: {p}" for p in _layer_problems(layer, requirements)]
    sizes: dict[str, dict[str, int]] = {}
    for function_id, resource in sorted(resources.items()):
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        props = {**globals_, **resource["Properties"]}
        # SAM appends a function's layers to the Globals' ones (lists merge, maps override).
        props["Layers"] = [*globals_.get("Layers", []), *resource["Properties"].get("Layers", [])]
        code_dir = build_dir / str(props["CodeUri"])
        own_layers = [
            layers[ref["Ref"]] for ref in props.get("Layers", []) if isinstance(ref, dict) and ref.get("Ref") in layers
        ]
        problem = _handler_problem(code_dir, own_layers, str(props["Handler"]))
        if problem:
            problems.append(f"{function_id}: {problem}")
        code, layer_bytes = _size(code_dir), sum(_size(layer) for layer in own_layers)
        sizes[function_id] = {"code": code, "layers": layer_bytes, "total": code + layer_bytes}
        if code + layer_bytes > UNZIPPED_LIMIT_BYTES:
            problems.append(f"{function_id}: {code + layer_bytes} bytes unzipped, over Lambda's 250 MB")
    return problems, sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m a2a_serverless.devstack.build_check", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("build_dir", type=Path)
    parser.add_argument("--requirements", type=Path, default=Path("shared/requirements.txt"))
    parser.add_argument("--json", type=Path, help="write the sizes as JSON")
    args = parser.parse_args(argv)
    problems, sizes = check_build(args.build_dir, args.requirements)
    for problem in problems:
        sys.stderr.write(f"build check: {problem}\n")
    sys.stdout.write(f"{'function':28} {'code KB':>9} {'layers MB':>10} {'total MB':>9}\n")
    for function_id, size in sizes.items():
        sys.stdout.write(
            f"{function_id:28} {size['code'] / 1024:9.0f} {size['layers'] / 2**20:10.1f} {size['total'] / 2**20:9.1f}\n"
        )
    if args.json:
        args.json.write_text(json.dumps(sizes, indent=2))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
