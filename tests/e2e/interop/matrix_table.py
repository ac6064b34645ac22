"""Render the interop matrix JSON written by ``tests/e2e/test_interop_matrix.py`` as a markdown table.

    A2A_INTEROP_MATRIX_JSON=/tmp/matrix.json .venv/bin/pytest tests/e2e/test_interop_matrix.py
    .venv/bin/python tests/e2e/interop/matrix_table.py /tmp/matrix.json [--details]

Rows are operations, columns client x binding (the a2a-sdk 0.3 and 1.x clients, then the JS
client ``@a2a-js/sdk`` in its 0.3 and 1.0 modes). A cell is ``pass``, ``FAIL``, ``n/a`` (the
operation does not exist in that protocol version) or ``—`` (not a scenario of that client's
driver); ``raw`` marks an operation the client SDK has no method for, driven with the SDK's own
request and response types instead. ``--details`` adds, per column, what each scenario observed
(states, errors the client raised, requests made).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROWS = [
    ("card", "Agent card: discovery and transport selection"),
    ("send_blocking", "Send message (blocking)"),
    ("send_non_blocking", "Send message (non-blocking), then poll with get"),
    ("get", "Get task"),
    ("list", "List tasks"),
    ("stream", "Stream a message"),
    ("cancel", "Cancel task (then cancel again: refused)"),
    ("errors", "Typed errors: unknown task (get, cancel, push config get, stream), cancel of a completed task"),
    ("resubscribe", "Resubscribe (0.3) / Subscribe (1.x) to a running task"),
    ("push_set", "Push config: set"),
    ("push_get", "Push config: get"),
    ("push_list", "Push config: list"),
    ("push_delete", "Push config: delete"),
    ("push_inline", "Send with an inline push config"),
    ("push_delivery", "Push delivery to the webhook, in the client's version"),
    ("cross_read", "Tasks of the other client generation: read, continue"),
]
COLUMNS = [(client, binding) for client in ("0.3", "1.x", "js-0.3", "js-1.0") for binding in ("JSONRPC", "HTTP+JSON")]
BINDING_NAMES = {"JSONRPC": "JSON-RPC", "HTTP+JSON": "REST"}


def mark(scenario: dict[str, Any] | None) -> str:
    if scenario is None:
        return "—"
    if scenario["ok"] is None:
        return "n/a"
    verdict = "pass" if scenario["ok"] else "**FAIL**"
    if str(scenario.get("via", "")).startswith("raw"):
        verdict += f" — {scenario['via']}"
    return verdict


def header(client: str, binding: str, cell: dict[str, Any] | None) -> str:
    """``0.3.26 client, JSON-RPC`` for a2a-sdk; ``JS 1.3.0 client (0.3 mode), REST`` for @a2a-js/sdk."""
    sdk = cell["sdk"] if cell and cell.get("sdk") else ""
    if client.startswith("js-"):
        version = sdk.removeprefix("@a2a-js/sdk").strip()
        return f"JS {version} client ({client.removeprefix('js-')} mode), {BINDING_NAMES[binding]}".replace("  ", " ")
    return f"{sdk.removeprefix('a2a-sdk ') or client} client, {BINDING_NAMES[binding]}"


def render(document: dict[str, Any], details: bool = False) -> str:
    cells = {(c["client"], c["binding"]): c for c in document["cells"]}
    headers = [header(client, binding, cells.get((client, binding))) for client, binding in COLUMNS]
    lines = ["| Operation | " + " | ".join(headers) + " |", "|---|" + "---|" * len(COLUMNS)]
    for key, label in ROWS:
        row = [mark((cells.get(column) or {}).get("scenarios", {}).get(key)) for column in COLUMNS]
        lines.append(f"| {label} | " + " | ".join(row) + " |")
    if details:
        for client, binding in COLUMNS:
            cell = cells.get((client, binding))
            if cell is None:
                continue
            mode = f" in {client.removeprefix('js-')} mode" if client.startswith("js-") else ""
            title = f"**{cell['sdk']}{mode} over {BINDING_NAMES[binding]}** ({cell.get('transport', '')}):"
            lines += ["", title, ""]
            for key, _ in ROWS:
                scenario = cell["scenarios"].get(key)
                if scenario is not None:
                    lines.append(f"- `{key}` ({mark(scenario)}): {scenario['detail']}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("matrix_json", type=Path)
    parser.add_argument("--details", action="store_true", help="list each scenario's observations too")
    args = parser.parse_args(argv)
    sys.stdout.write(render(json.loads(args.matrix_json.read_text()), details=args.details))
    return 0


if __name__ == "__main__":
    sys.exit(main())
