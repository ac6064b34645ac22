"""The package's structure in figures: what a refactor should move, and whether it moved.

For the runtime package (``shared/a2a_serverless/``) and, separately, the developer kit
(``shared/a2a_serverless_dev/``) it prints: modules, lines, lines that name ``Any`` as a type,
``type: ignore`` comments, functions over 60 lines, functions whose cyclomatic complexity is above 15
(ruff's C901, run as a subprocess), and the import circles among the package's modules.

The import graph is read from the source with ``ast``, every import statement counted: at module
level, inside functions, and under ``if TYPE_CHECKING:`` (a type-only circle is still a circle in
the design, and the one ``tests/test_architecture.py`` does not see), across the two packages.
Relative imports are resolved;
``from pkg import name`` imports the submodule ``pkg.name`` when there is one, else ``pkg``. The
circles are the graph's strongly connected components of more than one module.

    /work/main/.venv/bin/python infra/structure.py [--json] [--package DIR] [--kit DIR]

Standard library only; ruff is looked up beside the interpreter, then on ``PATH`` (without it the
complexity figures read ``null``).
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import shutil
import subprocess
import sys
import tokenize
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "shared" / "a2a_serverless"
KIT = ROOT / "shared" / "a2a_serverless_dev"
LONG_FUNCTION = 60
COMPLEXITY = 15


@dataclass
class Section:
    """The figures of one part of the package."""

    name: str
    modules: int = 0
    lines: int = 0
    any_lines: int = 0
    type_ignores: int = 0
    long_functions: list[str] = field(default_factory=list)
    complex_functions: list[str] | None = field(default_factory=list)
    import_circles: list[list[str]] = field(default_factory=list)


def module_names(root: Path) -> dict[str, Path]:
    """Every module under ``root`` by dotted name (a package by its own name)."""
    names: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _is_type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(tree: ast.Module, *, type_only: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, at module level or in a function; under ``if TYPE_CHECKING:`` only
    with ``type_only``."""
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if not type_only and isinstance(node, ast.If) and _is_type_checking(node):
            pending.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        pending.extend(ast.iter_child_nodes(node))


def import_graph(modules: Mapping[str, Path], *, type_only: bool = True) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, function-local imports included, and type-only
    ones unless ``type_only`` is False (``tests/test_architecture.py``'s graph: what runs)."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(), str(path)), type_only=type_only):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                if node.level:
                    parts = package.split(".")
                    base = parts[: len(parts) - node.level + 1]
                    source = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    source = node.module or ""
                targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source for a in node.names]
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def strongly_connected(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Tarjan's components of more than one node, each sorted, the list sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph) + 100))
    for start in sorted(graph):
        if start not in index:
            visit(start)
    return sorted(found)


def _names_any(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id == "Any"
    return isinstance(node, ast.Attribute) and node.attr == "Any" and isinstance(node.value, ast.Name)


def any_lines(tree: ast.Module) -> set[int]:
    """Lines naming ``Any`` (or ``typing.Any``), in string annotations too; imports are not uses."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Attribute)) and _names_any(node):
            lines.add(node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "Any" in node.value:
            try:
                inner = ast.parse(node.value, mode="eval")
            except SyntaxError:
                continue
            if any(_names_any(sub) for sub in ast.walk(inner)):
                lines.add(node.lineno)
    return lines


def type_ignores(text: str) -> int:
    comments = (
        tok.string for tok in tokenize.generate_tokens(io.StringIO(text).readline) if tok.type == tokenize.COMMENT
    )
    return sum(1 for comment in comments if re.search(r"type:\s*ignore", comment))


def long_functions(tree: ast.Module, module: str) -> list[str]:
    """``module:qualname (N lines)`` for each function longer than LONG_FUNCTION (def to last line)."""
    out: list[str] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                length = (child.end_lineno or child.lineno) - child.lineno + 1
                if length > LONG_FUNCTION:
                    out.append(f"{module}:{name} ({length} lines)")
                walk(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            else:
                walk(child, prefix)

    walk(tree, "")
    return out


def _ruff() -> str | None:
    beside = Path(sys.executable).parent / "ruff"
    return str(beside) if beside.exists() else shutil.which("ruff")


def complex_functions(root: Path, modules: Mapping[str, Path]) -> dict[Path, list[str]] | None:
    """Path -> ``module:name (complexity N)`` above COMPLEXITY, by ruff's C901; None without ruff."""
    ruff = _ruff()
    if ruff is None:
        return None
    command = [
        ruff,
        "check",
        "--no-cache",
        "--select",
        "C901",
        "--config",
        f"lint.mccabe.max-complexity={COMPLEXITY}",
        "--output-format",
        "json",
        str(root),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=root.parent)  # noqa: S603
    if done.returncode not in (0, 1):
        raise SystemExit(f"ruff failed: {done.stderr.strip()}")
    by_path = {path.resolve(): name for name, path in modules.items()}
    found: dict[Path, list[str]] = {}
    for item in json.loads(done.stdout or "[]"):
        path = Path(item["filename"]).resolve()
        match = re.match(r"`(.+)` is too complex \((\d+) > \d+\)", item["message"])
        label = f"{match.group(1)} (complexity {match.group(2)})" if match else item["message"]
        found.setdefault(path, []).append(f"{by_path.get(path, path.name)}:{label}")
    return found


def measure(root: Path, kit: Path | None = None) -> list[Section]:
    """The runtime package at ``root`` and the developer kit at ``kit`` (none: no modules)."""
    runtime_modules = module_names(root)
    kit_modules = module_names(kit) if kit is not None and kit.is_dir() else {}
    modules = {**runtime_modules, **kit_modules}
    in_kit = {name: name in kit_modules for name in modules}
    sections = {False: Section("runtime"), True: Section("kit")}
    parts = [(root, runtime_modules), *([(kit, kit_modules)] if kit is not None and kit_modules else [])]
    found = [complex_functions(directory, names) for directory, names in parts]
    complexity = None if None in found else {path: f for by_path in found if by_path for path, f in by_path.items()}
    for name, path in modules.items():
        section = sections[in_kit[name]]
        text = path.read_text()
        tree = ast.parse(text, str(path))
        section.modules += 1
        section.lines += len(text.splitlines())
        section.any_lines += len(any_lines(tree))
        section.type_ignores += type_ignores(text)
        section.long_functions.extend(long_functions(tree, name))
        if complexity is None:
            section.complex_functions = None
        elif section.complex_functions is not None:
            section.complex_functions.extend(complexity.get(path.resolve(), []))
    for component in strongly_connected(import_graph(modules)):
        # A circle belongs to the kit only when all of it is in the kit.
        sections[all(in_kit[member] for member in component)].import_circles.append(component)
    return [sections[False], sections[True]]


def render(sections: Iterable[Section]) -> str:
    lines: list[str] = []
    for s in sections:
        lines += [
            f"== {s.name}",
            f"modules             {s.modules}",
            f"lines               {s.lines}",
            f"lines naming Any    {s.any_lines}",
            f"type: ignore        {s.type_ignores}",
            f"functions > {LONG_FUNCTION} lines {len(s.long_functions)}",
            *(f"    {f}" for f in s.long_functions),
            "complexity > {}     {}".format(
                COMPLEXITY, "n/a (no ruff)" if s.complex_functions is None else len(s.complex_functions)
            ),
            *(f"    {f}" for f in s.complex_functions or ()),
            f"import circles      {len(s.import_circles)}",
            *(f"    {' <-> '.join(c)}" for c in s.import_circles),
            "",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--package", type=Path, default=PACKAGE, help="the runtime package's directory")
    parser.add_argument("--kit", type=Path, default=None, help="the developer kit's directory (with --package: none)")
    args = parser.parse_args(argv)
    kit = args.kit if args.kit is not None else (KIT if args.package == PACKAGE else None)
    sections = measure(args.package.resolve(), kit.resolve() if kit is not None else None)
    if args.json:
        print(json.dumps({s.name: asdict(s) for s in sections}, indent=2))
    else:
        print(render(sections))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
