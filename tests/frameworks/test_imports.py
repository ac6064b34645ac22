"""The frameworks package costs nothing to import: each adapter imports its framework in its own
module, so the base install (and the Lambda layer, built from it) needs none of them."""

from __future__ import annotations

import subprocess
import sys

FRAMEWORKS = ("pydantic_ai", "langgraph", "langchain_core", "strands", "agents", "openai", "google")


def test_importing_the_frameworks_package_imports_no_framework() -> None:
    probe = (
        "import sys, a2a_serverless.frameworks; "
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {FRAMEWORKS!r}))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_an_adapter_without_its_framework_says_which_extra_to_install() -> None:
    probe = (
        "import sys; sys.modules['pydantic_ai'] = None\n"
        "try:\n    import a2a_serverless.frameworks.pydantic_ai\n"
        "except ImportError as exc:\n    print(exc)\n"
    )
    said = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert "pip install 'a2a-serverless[pydantic-ai]'" in said
