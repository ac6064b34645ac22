"""The package's shape, as the layer map in ``a2a_serverless/__init__.py`` states it: nothing imports
in a circle and imports point only up the map (lazy imports inside functions included,
``if TYPE_CHECKING:`` blocks not: those are never executed); and the runtime never imports the
developer kit (``a2a_serverless_dev``), which the Lambda layer does not hold."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

import a2a_serverless
import a2a_serverless_dev
from testkit.modules import load_file

PACKAGE = Path(a2a_serverless.__file__).parent
MAX_LINES = 400
"""Past this a module gets a look (style.md: "a module past ~400 lines gets a hard look"): not a
wall. A module that stays longer because it holds one concern is named in ``LOOKED_AT``."""

LOOKED_AT: dict[str, str] = {
    "a2a_serverless.operations.send_message": "SendMessage, with how it tells a retry from a new message"
    " (its send keys): one method's rules, read together",
    "a2a_serverless.ports.store": "the TaskStore port: the protocol, the records it reads and writes (send"
    " keys included) and the sequence every store shares over its primitives (as powertools' idempotency"
    " persistence/base.py holds its record, its base layer and their helpers)",
    "a2a_serverless.adapters.dynamodb.table": "the tasks table: its keys and items and the one door to"
    " the client that writes them (as powertools' persistence/dynamodb.py holds both)",
    "a2a_serverless.adapters.dynamodb.store": "the TaskStore on that table: each write of a task (a create,"
    " a commit) as the conditional puts it is made of, with what a failed one takes back; its reads are"
    " .reads, its queries .queries",
}
"""The modules over ``MAX_LINES`` that were looked at and hold one concern, each with why: splitting
them would scatter what a reader needs together (a cohesive adapter is not split to fit a count)."""

LAYERS: tuple[tuple[str, ...], ...] = (
    ("versions", "json_types", "errors", "models", "config", "jwt"),
    ("ports", "aws", "telemetry"),
    ("lifecycle", "transitions", "mutation", "blobs", "auth", "v03"),
    ("runtime",),
    ("operations", "methods", "card", "execution", "push", "delegation", "durable"),
    ("frameworks",),
    ("adapters",),
    ("wiring",),
    ("transport", "lambda_", "functions"),
)
"""The layer map of the package docstring, top first: the first component of each module's name."""


def _load_structure() -> ModuleType:
    """``infra/structure.py``, whose module listing and import graph these rules read."""
    return load_file(Path(__file__).resolve().parents[1] / "infra" / "structure.py", "structure")


_STRUCTURE = _load_structure()


def module_names(root: Path, package: str) -> dict[str, Path]:
    """Every module of the package under ``root`` by dotted name (a package by its own name)."""
    assert root.name == package, (root, package)
    names: dict[str, Path] = _STRUCTURE.module_names(root)
    return names


def import_graph(modules: Mapping[str, Path]) -> dict[str, set[str]]:
    """Module -> the package's modules it imports when it runs: lazy imports inside functions
    included, ``if TYPE_CHECKING:`` blocks not. ``from pkg import name`` depends on the submodule
    ``pkg.name`` when there is one, else on ``pkg`` itself."""
    graph: dict[str, set[str]] = _STRUCTURE.import_graph(modules, type_only=False)
    return graph


def find_cycle(graph: Mapping[str, set[str]]) -> list[str] | None:
    """One import cycle (``[a, b, ..., a]``), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)) is not None:
            return found
    return None


def layer_of(module: str) -> int:
    top = module.split(".")[1] if "." in module else ""
    for index, layer in enumerate(LAYERS):
        if top in layer:
            return index
    raise AssertionError(f"{module} is in no layer of the map: add it to the package docstring and LAYERS")


MODULES = module_names(PACKAGE, "a2a_serverless")
GRAPH = import_graph(MODULES)
KIT = "a2a_serverless_dev"
KIT_MODULES = module_names(Path(a2a_serverless_dev.__file__).parent, KIT)
"""The developer kit: one layer below the whole runtime (it may import any of it), no circles."""


def kit_imports(modules: Mapping[str, Path]) -> list[str]:
    """``module imports name`` for every import of the developer kit in ``modules``: any import
    statement, at import time, inside a function or type-only (relative imports stay in their
    package, so only absolute ones can reach the kit)."""
    found: list[str] = []
    for name, path in sorted(modules.items()):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                targets = [node.module or ""]
            else:
                continue
            found += [f"{name} imports {t}" for t in targets if t == KIT or t.startswith(f"{KIT}.")]
    return found


def test_nothing_imports_in_a_circle() -> None:
    assert find_cycle(GRAPH) is None, " -> ".join(find_cycle(GRAPH) or [])
    kit_graph = import_graph(KIT_MODULES)
    assert find_cycle(kit_graph) is None, " -> ".join(find_cycle(kit_graph) or [])


def test_imports_point_up_the_layer_map() -> None:
    # Given every module's layer, when one imports another, then the other is in its layer or above.
    wrong = sorted(
        f"{module} (layer {layer_of(module) + 1}) imports {target} (layer {layer_of(target) + 1})"
        for module, targets in GRAPH.items()
        if module != "a2a_serverless"
        for target in targets
        if layer_of(target) > layer_of(module)
    )
    assert wrong == []


def test_every_top_level_module_is_on_the_map() -> None:
    docstring = a2a_serverless.__doc__ or ""
    for top in sorted({name.split(".")[1] for name in MODULES if "." in name}):
        layer_of(f"a2a_serverless.{top}")
        assert f":mod:`.{top}`" in docstring, f"{top} is not on the package docstring's layer map"


def test_the_runtime_never_imports_the_developer_kit() -> None:
    # The layer ships the runtime package as it is, without the kit: an import of it would fail on Lambda.
    assert kit_imports(MODULES) == []


def test_a_module_over_400_lines_was_looked_at() -> None:
    # A long module is a prompt to look: it is split where it holds two concerns, else named in
    # LOOKED_AT with the one concern it holds. A name there that is no longer long is dropped.
    modules = {**MODULES, **KIT_MODULES}
    long = {name for name, path in modules.items() if len(path.read_text().splitlines()) > MAX_LINES}
    assert sorted(long - LOOKED_AT.keys()) == [], "over 400 lines: split by concern, or say why not in LOOKED_AT"
    assert sorted(LOOKED_AT.keys() - long) == [], "no longer over 400 lines: drop from LOOKED_AT"
    assert all(reason.strip() for reason in LOOKED_AT.values())


# --------------------------------------------------------------------------- the checker itself


def _package(root: Path, files: Mapping[str, str]) -> dict[str, Path]:
    for relative, text in files.items():
        path = root / "pkg" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return module_names(root / "pkg", "pkg")


def test_the_checker_finds_a_circle_through_a_lazy_import(tmp_path: Path) -> None:
    modules = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from . import b\n",
            "b.py": "def f():\n    from .sub import c\n",
            "sub/__init__.py": "",
            "sub/c.py": "from ..a import thing\n",
        },
    )
    assert find_cycle(import_graph(modules)) == ["pkg.a", "pkg.b", "pkg.sub.c", "pkg.a"]


def test_the_checker_finds_an_import_of_the_kit(tmp_path: Path) -> None:
    modules = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "def f():\n    from a2a_serverless_dev.stack import run\n",
            "b.py": "import a2a_serverless_dev.cli\nimport a2a_serverless_devtools\n",
            "c.py": "from a2a_serverless import config\n",
        },
    )
    assert kit_imports(modules) == ["pkg.a imports a2a_serverless_dev.stack", "pkg.b imports a2a_serverless_dev.cli"]


def test_the_checker_ignores_type_only_imports(tmp_path: Path) -> None:
    modules = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from . import b\n",
            "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\n",
        },
    )
    assert find_cycle(import_graph(modules)) is None
