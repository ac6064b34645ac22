"""The documented commands run against the real local stack, started as tests/e2e starts it:
``tests/e2e`` goes on the import path so that ``e2e_stack.running_stack`` is shared, not copied."""

from __future__ import annotations

import sys
from pathlib import Path

E2E = Path(__file__).resolve().parents[1] / "e2e"
if str(E2E) not in sys.path:
    sys.path.insert(0, str(E2E))
