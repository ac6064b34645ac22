"""The check of a ``sam build`` tree (``a2a_serverless_dev.build_check``), on small trees made
here, their bytecode compiled by the runtime's Python (3.13) as the layer's build does."""

from __future__ import annotations

import py_compile
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from a2a_serverless_dev.build_check import check_build, runtime_python

TEMPLATE = """
Globals:
  Function:
    Layers: [!Ref CoreLayer]
Resources:
  CoreLayer:
    Type: AWS::Serverless::LayerVersion
    Properties: {ContentUri: CoreLayer}
    Metadata: {BuildMethod: makefile, BuildArchitecture: x86_64}
  Reader:
    Type: AWS::Serverless::Function
    Properties: {CodeUri: Reader, Handler: reader.handler}
  Gateway:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: Gateway
      Handler: !If [HasAdapter, run.sh, a2a_serverless.functions.gateway.handler]
      Layers: !If [HasAdapter, [!Ref CoreLayer, "arn:aws:lambda:us-east-1:1:layer:Adapter:1"], [!Ref CoreLayer]]
"""
KIT_METADATA = "Metadata-Version: 2.1\nName: a2a-serverless\nRequires-Dist: httpx>=0.27\nRequires-Dist: boto3>=1.34\n"
WHEEL = "Wheel-Version: 1.0\nTag: {tag}\n"


@pytest.fixture(scope="module")
def python313() -> Path:
    found = runtime_python()
    if found is None:
        pytest.skip("no Python 3.13 (the functions' runtime) here")
    return found


def compiled(python: Path, python313: Path, *options: str) -> None:
    command = [str(python313), "-m", "compileall", "-q", *options, str(python)]
    subprocess.run(command, check=True, timeout=120)


def a_build(root: Path, python313: Path) -> Path:
    """A build that passes: two functions, the core layer with the kit, its one dependency (httpx;
    boto3 is the runtime's), an x86_64 binary, and unchecked-hash bytecode for Python 3.13."""
    root.mkdir()
    (root / "template.yaml").write_text(TEMPLATE)
    (root / "Reader").mkdir()
    (root / "Reader" / "reader.py").write_text("handler = make()\n")
    (root / "Gateway").mkdir()
    (root / "Gateway" / "run.sh").write_text("#!/bin/sh\n")
    python = root / "CoreLayer" / "python"
    (python / "a2a_serverless" / "functions").mkdir(parents=True)
    (python / "a2a_serverless" / "__init__.py").write_text("")
    (python / "a2a_serverless" / "functions" / "gateway.py").write_text("handler = make()\n")
    (python / "a2a_serverless-0.1.0.dist-info").mkdir()
    (python / "a2a_serverless-0.1.0.dist-info" / "METADATA").write_text(KIT_METADATA)
    (python / "httpx").mkdir()
    (python / "httpx" / "__init__.py").write_text("VERSION = 1\n")
    (python / "httpx-1.0.dist-info").mkdir()
    (python / "httpx-1.0.dist-info" / "WHEEL").write_text(WHEEL.format(tag="py3-none-any"))
    (python / "fast-1.0.dist-info").mkdir()
    (python / "fast-1.0.dist-info" / "WHEEL").write_text(WHEEL.format(tag="cp313-cp313-manylinux_2_17_x86_64"))
    compiled(python, python313, "--invalidation-mode", "unchecked-hash")
    return root


def _no_gateway_module(python: Path, python313: Path) -> None:
    (python / "a2a_serverless" / "functions" / "gateway.py").unlink()


def _devstack(python: Path, python313: Path) -> None:
    (python / "a2a_serverless_dev").mkdir()


def _moto(python: Path, python313: Path) -> None:
    (python / "moto-5.2.5.dist-info").mkdir()


def _kit_copied_not_installed(python: Path, python313: Path) -> None:
    shutil.rmtree(python / "a2a_serverless-0.1.0.dist-info")


def _dependency_missing(python: Path, python313: Path) -> None:
    shutil.rmtree(python / "httpx-1.0.dist-info")


def _arm64_binary(python: Path, python313: Path) -> None:
    (python / "fast-1.0.dist-info" / "WHEEL").write_text(WHEEL.format(tag="cp313-cp313-manylinux_2_17_aarch64"))


def _module_without_bytecode(python: Path, python313: Path) -> None:
    (python / "httpx" / "_models.py").write_text("X = 1\n")


def _bytecode_of_this_python(python: Path, python313: Path) -> None:
    # Python 3.11's bytecode where 3.13's should be
    source = python / "httpx" / "__init__.py"
    target = python / "httpx" / "__pycache__" / "__init__.cpython-313.pyc"
    py_compile.compile(str(source), cfile=str(target), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)


def _source_changed(python: Path, python313: Path) -> None:
    (python / "httpx" / "__init__.py").write_text("VERSION = 2\n")


def _timestamped(python: Path, python313: Path) -> None:
    shutil.rmtree(python / "httpx" / "__pycache__")
    compiled(python / "httpx", python313)  # the default: timestamp-checked


def test_a_complete_build_passes_with_every_functions_sizes(tmp_path: Path, python313: Path) -> None:
    problems, sizes, layers = check_build(a_build(tmp_path / "b", python313), runtime_python=python313)

    assert problems == []
    assert set(sizes) == {"Reader", "Gateway"}
    # The gateway's own layers (a condition, which replaces the Globals' list) hold the core layer once
    assert sizes["Gateway"]["layers"] == sizes["Reader"]["layers"] > 0
    # The layer: its modules, each with its bytecode, and its size zipped as deployed
    assert (layers["CoreLayer"].py, layers["CoreLayer"].pyc) == (3, 3)
    assert layers["CoreLayer"].zipped > 0


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(_no_gateway_module, "Gateway: module a2a_serverless.functions.gateway is missing", id="handler"),
        pytest.param(_dependency_missing, "httpx (the kit's dependency) is not installed", id="dependency"),
        pytest.param(_kit_copied_not_installed, "the kit is not installed in the layer", id="kit-not-installed"),
        pytest.param(_devstack, "a2a_serverless_dev is in the layer", id="local-stack"),
        pytest.param(_moto, "moto is in the layer", id="test-tool"),
        pytest.param(_arm64_binary, "fast is built for manylinux_2_17_aarch64, the layer for x86_64", id="arch"),
        pytest.param(_module_without_bytecode, "httpx/_models.py has no bytecode for this Python", id="no-bytecode"),
        pytest.param(_bytecode_of_this_python, "httpx/__init__.py: its bytecode is for another Python", id="magic"),
        pytest.param(_source_changed, "httpx/__init__.py: its bytecode is of another source", id="stale"),
        pytest.param(_timestamped, "httpx/__init__.py: its bytecode is not unchecked-hash", id="timestamped"),
    ],
)
def test_a_broken_build_is_reported(
    tmp_path: Path, python313: Path, change: Callable[[Path, Path], None], expected: str
) -> None:
    # Given a complete build, changed one way
    build = a_build(tmp_path / "b", python313)
    change(build / "CoreLayer" / "python", python313)
    # When it is checked, then that is what is reported
    problems, _, _ = check_build(build, runtime_python=python313)
    assert any(expected in p for p in problems), problems


def test_without_the_runtimes_python_the_bytecode_is_not_taken_on_trust(tmp_path: Path, python313: Path) -> None:
    problems, _, _ = check_build(a_build(tmp_path / "b", python313), runtime_python=None)
    assert problems == ["CoreLayer: no Python 3.13 (the runtime's) to check the bytecode with: --python"]


TRACED_TEMPLATE = (
    TEMPLATE.replace(
        "    Layers: [!Ref CoreLayer]\n",
        "    Layers: !If [TracingOn, [!Ref CoreLayer, !Ref TracingLayer], [!Ref CoreLayer]]\n",
    )
    + """  TracingLayer:
    Type: AWS::Serverless::LayerVersion
    Properties: {ContentUri: TracingLayer}
    Metadata: {BuildMethod: makefile, BuildArchitecture: x86_64}
"""
)


def a_traced_build(root: Path, python313: Path) -> Path:
    """A complete build with the tracing layer beside the core layer (``build.py --adds tracing``):
    the kit's tracing extra (``otel``) in it, nothing of the core layer's."""
    build = a_build(root, python313)
    (build / "template.yaml").write_text(TRACED_TEMPLATE)
    metadata = build / "CoreLayer" / "python" / "a2a_serverless-0.1.0.dist-info" / "METADATA"
    metadata.write_text(KIT_METADATA + 'Requires-Dist: otel>=1.0; extra == "tracing"\n')
    python = build / "TracingLayer" / "python"
    (python / "otel").mkdir(parents=True)
    (python / "otel" / "__init__.py").write_text("SDK = 1\n")
    (python / "otel-1.0.dist-info").mkdir()
    (python / "otel-1.0.dist-info" / "WHEEL").write_text(WHEEL.format(tag="py3-none-any"))
    compiled(python, python313, "--invalidation-mode", "unchecked-hash")
    return build


def _extra_in_the_core_layer(build: Path) -> None:
    shutil.move(build / "TracingLayer" / "python" / "otel-1.0.dist-info", build / "CoreLayer" / "python")


def _extra_missing(build: Path) -> None:
    shutil.rmtree(build / "TracingLayer" / "python" / "otel-1.0.dist-info")


def _a_core_distribution_twice(build: Path) -> None:
    shutil.copytree(
        build / "CoreLayer" / "python" / "httpx-1.0.dist-info",
        build / "TracingLayer" / "python" / "httpx-1.0.dist-info",
    )


def _the_kit_in_the_tracing_layer(build: Path) -> None:
    (build / "TracingLayer" / "python" / "a2a_serverless").mkdir()


def test_the_tracing_layer_beside_the_core_layer_passes(tmp_path: Path, python313: Path) -> None:
    problems, sizes, layers = check_build(a_traced_build(tmp_path / "b", python313), runtime_python=python313)
    assert problems == []
    assert (layers["TracingLayer"].py, layers["TracingLayer"].pyc) == (1, 1)
    # A function's layers (the Globals' Fn::If) count both
    assert sizes["Reader"]["layers"] > sizes["Gateway"]["layers"] > 0


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(
            _extra_in_the_core_layer,
            "TracingLayer: otel (the kit's tracing extra) is in the core layer",
            id="core-grew",
        ),
        pytest.param(_extra_missing, "TracingLayer: otel (the kit's tracing extra) is not installed", id="missing"),
        pytest.param(_a_core_distribution_twice, "TracingLayer: httpx is in the core layer too", id="twice"),
        pytest.param(_the_kit_in_the_tracing_layer, "TracingLayer: the kit is in the layer", id="kit"),
    ],
)
def test_a_broken_tracing_layer_is_reported(
    tmp_path: Path, python313: Path, change: Callable[[Path], None], expected: str
) -> None:
    build = a_traced_build(tmp_path / "b", python313)
    change(build)
    problems, _, _ = check_build(build, runtime_python=python313)
    assert any(expected in p for p in problems), problems
