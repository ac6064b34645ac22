"""The check of a ``sam build`` tree (``a2a_serverless.devstack.build_check``), on small trees made here."""

from __future__ import annotations

from pathlib import Path

import pytest

from a2a_serverless.devstack.build_check import check_build

TEMPLATE = """
Globals:
  Function:
    Layers: [!Ref CoreLayer]
Resources:
  CoreLayer:
    Type: AWS::Serverless::LayerVersion
    Properties: {ContentUri: CoreLayer}
  Reader:
    Type: AWS::Serverless::Function
    Properties: {CodeUri: Reader, Handler: reader.handler}
  Gateway:
    Type: AWS::Serverless::Function
    Properties: {CodeUri: Gateway, Handler: run.sh, Layers: [arn:aws:lambda:us-east-1:1:layer:Adapter:1]}
"""


def a_build(
    root: Path, *, handler_source: str = "handler = make()\n", layer_packages: tuple[str, ...] = ("httpx",)
) -> Path:
    root.mkdir()
    (root / "template.yaml").write_text(TEMPLATE)
    (root / "Reader").mkdir()
    (root / "Reader" / "reader.py").write_text(handler_source)
    (root / "Gateway").mkdir()
    (root / "Gateway" / "run.sh").write_text("#!/bin/sh\n")
    python = root / "CoreLayer" / "python"
    (python / "a2a_serverless").mkdir(parents=True)
    (python / "a2a_serverless" / "__init__.py").write_text("")
    for name in layer_packages:
        (python / f"{name}-1.0.dist-info").mkdir()
    return root


@pytest.fixture
def requirements(tmp_path: Path) -> Path:
    path = tmp_path / "requirements.txt"
    path.write_text("# runtime\nhttpx>=0.27\n")
    return path


def test_a_complete_build_passes_with_every_functions_sizes(tmp_path: Path, requirements: Path) -> None:
    problems, sizes = check_build(a_build(tmp_path / "b"), requirements)

    assert problems == []
    assert set(sizes) == {"Reader", "Gateway"}
    # The gateway's own layer list adds to the Globals' (SAM appends), so it carries the core layer too
    assert sizes["Gateway"]["layers"] == sizes["Reader"]["layers"]


@pytest.mark.parametrize(
    ("source", "packages", "expected"),
    [
        pytest.param("def other(): ...\n", ("httpx",), "Reader: reader defines no handler", id="no-handler"),
        pytest.param("handler = 1\n", (), "httpx (shared/requirements.txt) is not installed", id="missing-dependency"),
    ],
)
def test_a_broken_build_is_reported(
    tmp_path: Path, requirements: Path, source: str, packages: tuple[str, ...], expected: str
) -> None:
    problems, _ = check_build(a_build(tmp_path / "b", handler_source=source, layer_packages=packages), requirements)

    assert any(expected in p for p in problems), problems
