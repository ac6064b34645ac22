"""The frameworks package costs nothing to import: each adapter imports its framework in its own
module, so the base install (and the Lambda layer, built from it) needs none of them."""

from __future__ import annotations

import subprocess
import sys

import pytest

FRAMEWORKS = ("pydantic_ai", "langgraph", "langchain_core", "strands", "agents", "openai", "google")


def test_importing_the_frameworks_package_imports_no_framework() -> None:
    probe = (
        "import sys, a2a_serverless.frameworks; "
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {FRAMEWORKS!r}))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


ADAPTERS = [
    pytest.param("pydantic_ai", "pydantic_ai", "pydantic-ai", id="pydantic-ai"),
    pytest.param("langgraph", "langgraph", "langgraph", id="langgraph"),
    pytest.param("strands", "strands", "strands", id="strands"),
    pytest.param("openai_agents", "agents", "openai-agents", id="openai-agents"),
    pytest.param("google_adk", "google.adk", "google-adk", id="google-adk"),
]


@pytest.mark.parametrize(("adapter", "framework", "extra"), ADAPTERS)
def test_an_adapter_without_its_framework_says_which_extra_to_install(adapter: str, framework: str, extra: str) -> None:
    probe = (
        f"import sys; sys.modules[{framework!r}] = None\n"
        f"try:\n    import a2a_serverless.frameworks.{adapter}\n"
        "except ImportError as exc:\n    print(exc)\n"
    )
    said = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert f"pip install 'a2a-serverless[{extra}]'" in said
