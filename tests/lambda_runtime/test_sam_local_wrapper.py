"""infra/lambda-image/sam-local: ``sam local`` on the kit's image, which it checks first, so that a
missing image is reported as that, not as SAM's failure to pull it (docs/lambda-runtime.md)."""

from __future__ import annotations

import platform
import subprocess

import pytest
from sam_local import ROOT

pytestmark = pytest.mark.lambda_runtime

WRAPPER = ROOT / "infra" / "lambda-image" / "sam-local"
ARCHITECTURE = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "arm64", "arm64": "arm64"}[platform.machine()]


def test_an_architecture_without_its_image_is_reported_with_what_to_run(docker: str) -> None:
    # Given no kit image for the other architecture than this machine's
    other = "arm64" if ARCHITECTURE == "x86_64" else "x86_64"
    image = f"a2a-serverless/lambda-python:3.13-{other}"
    if subprocess.run([docker, "image", "inspect", image], capture_output=True).returncode == 0:
        pytest.skip(f"{image} exists here")

    # When sam local is asked to run a function of that architecture through the wrapper
    args = ["invoke", "AgentCardFunction", "--parameter-overrides", f"Architecture={other}"]
    run = subprocess.run([str(WRAPPER), *args], capture_output=True, text=True, timeout=60)

    # Then it stops before SAM, naming the image, the make command that builds it, and the other way
    assert run.returncode == 2
    assert run.stderr == (
        f"sam-local: no Lambda image for {other} ({image}): run make docker LAMBDA_IMAGE_ARCH={other} "
        f"or use --parameter-overrides Architecture={ARCHITECTURE}\n"
    )


def test_the_templates_default_architecture_is_arm64_when_none_is_given(docker: str) -> None:
    # Given no arm64 image
    arm64 = "a2a-serverless/lambda-python:3.13-arm64"
    if subprocess.run([docker, "image", "inspect", arm64], capture_output=True).returncode == 0:
        pytest.skip(f"{arm64} exists here")

    # When sam local is asked to run a function without naming the architecture
    run = subprocess.run([str(WRAPPER), "invoke", "AgentCardFunction"], capture_output=True, text=True, timeout=60)

    # Then the wrapper takes the template's default, arm64, and says its image is missing
    assert run.returncode == 2
    assert "no Lambda image for arm64" in run.stderr
