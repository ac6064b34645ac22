"""``infra/structure.py``, the package's structure in figures: it runs on the real tree, and the real
tree imports in no circle, not even through ``if TYPE_CHECKING:`` imports (which
``tests/test_architecture.py`` leaves out, because they never run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve().parents[1] / "infra" / "structure.py"


def _figures(*args: str) -> dict[str, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--json", *args], capture_output=True, text=True, check=True, timeout=300
    )
    figures: dict[str, dict[str, Any]] = json.loads(done.stdout)
    return figures


def test_the_package_imports_in_no_circle_type_only_imports_included() -> None:
    # Given the package as it is, when the script measures it, then both parts have modules and lines
    # and neither has an import circle.
    figures = _figures()
    assert set(figures) == {"runtime", "kit"}
    for part in figures.values():
        assert part["modules"] > 0
        assert part["lines"] > part["modules"]
        assert part["import_circles"] == []


def test_the_script_finds_a_circle_through_a_type_only_import(tmp_path: Path) -> None:
    # Given a package whose only circle goes through an ``if TYPE_CHECKING:`` import and a relative
    # ``from . import name`` of a submodule, when the script measures it, then it names that circle.
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "a.py": "from typing import Any, TYPE_CHECKING\nif TYPE_CHECKING:\n    from .sub import b\nx: Any = 1\n",
        "sub/__init__.py": "",
        "sub/b.py": "def f() -> None:\n    from .. import a  # type: ignore[attr-defined]\n",
        "c.py": "import pkg.a\n",
    }
    for relative, text in files.items():
        (package / relative).write_text(text)
    figures = _figures("--package", str(package))
    assert figures["runtime"]["import_circles"] == [["pkg.a", "pkg.sub.b"]]
    assert figures["runtime"]["modules"] == 5
    assert figures["runtime"]["any_lines"] == 1
    assert figures["runtime"]["type_ignores"] == 1
    assert figures["kit"]["modules"] == 0
