"""docs/operations.md's table of metrics is the catalogue the functions write from
(``lambda_/_metrics.py``): every metric, with its unit and dimensions, and no other."""

from __future__ import annotations

import re
from pathlib import Path

from a2a_serverless.lambda_._metrics import CATALOGUE

DOC = Path(__file__).resolve().parents[2] / "docs" / "operations.md"


def documented() -> dict[str, tuple[str, frozenset[str]]]:
    """Each metric the table names: its unit and dimensions."""
    rows: dict[str, tuple[str, frozenset[str]]] = {}
    for line in DOC.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 5 or not cells[0].startswith("`"):
            continue
        dimensions = frozenset(re.findall(r"`(\w+)`", cells[2]))
        for name in re.findall(r"`(\w+)`", cells[0]):
            rows[name] = (cells[1], dimensions)
    return rows


def test_the_table_lists_every_metric_with_its_unit_and_dimensions() -> None:
    expected = {m.name: (str(m.unit.value), frozenset({"service", m.dimension} - {""})) for m in CATALOGUE}
    assert documented() == expected
