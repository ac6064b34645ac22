"""Tracing switched on in this process, spans kept in memory (``A2A_TRACING=memory``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from a2a_serverless import telemetry


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Tracing on for the test; yields nothing useful itself: read ``finished()``."""
    monkeypatch.setenv(telemetry.SWITCH_ENV, "memory")
    telemetry.reset()
    from a2a_serverless.telemetry import _sdk

    telemetry.tracing_on()
    _sdk.MEMORY.clear()
    yield []
    _sdk.MEMORY.clear()
    monkeypatch.delenv(telemetry.SWITCH_ENV)
    telemetry.reset()
