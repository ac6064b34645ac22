"""The real local stack, once per session (see ``e2e_stack`` for how it is run and stopped)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from e2e_stack import running_stack


@pytest.fixture(scope="session")
def devstack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL (``http://127.0.0.1:<port>``) of a running local stack."""
    with running_stack(tmp_path_factory.mktemp("devstack")) as (base_url, _):
        yield base_url
