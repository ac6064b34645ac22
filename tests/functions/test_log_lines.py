"""The Lambda functions' log lines (Powertools Logger, structured JSON on stdout)."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from a2a_serverless.errors import InvalidParamsError
from a2a_serverless.lambda_._observability import logger


@pytest.fixture
def stdout_lines() -> Iterator[tuple[logging.Logger, io.BytesIO]]:
    """A core logger writing through the functions' formatter to a strict UTF-8 stream, as Lambda's
    stdout is."""
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8", errors="strict", write_through=True)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logger.registered_formatter)
    core = logging.getLogger("a2a_serverless.tests.log_lines")
    core.addHandler(handler)
    core.propagate = False
    try:
        yield core, raw
    finally:
        core.removeHandler(handler)


def test_an_error_holding_a_lone_surrogate_is_logged_with_it_escaped(
    stdout_lines: tuple[logging.Logger, io.BytesIO],
) -> None:
    """A request can carry a lone surrogate (a valid ``\\ud800`` JSON escape) into an error's text.
    The line saying why the request failed is still written, as JSON, the character escaped."""
    core, raw = stdout_lines
    try:
        raise InvalidParamsError("bad \udfff")
    except InvalidParamsError:
        core.exception("could not render an A2A error")
    record = json.loads(raw.getvalue().decode("utf-8"))
    assert record["message"] == "could not render an A2A error"
    assert "bad \udfff" in record["exception"]
    assert b"\\udfff" in raw.getvalue()


def test_other_text_is_written_as_it_is(stdout_lines: tuple[logging.Logger, io.BytesIO]) -> None:
    core, raw = stdout_lines
    core.warning("naïve ✓ %s", {"task": "t-1"})
    assert "naïve ✓".encode() in raw.getvalue()
    record = json.loads(raw.getvalue().decode("utf-8"))
    assert record["message"] == "naïve ✓ {'task': 't-1'}"
    assert record["service"] == "a2a-serverless"
