"""The environment a deployed function sees, rebuilt for the local stack.

The gateway app and the worker read their configuration from ``os.environ`` exactly as on Lambda,
so the local stack sets it once, at the process entry point, before any of them is imported or built.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from a2a_serverless.config import env_flag

from ._template import FunctionEnvironment

if TYPE_CHECKING:
    from boto3.session import Session

__all__ = [
    "FAKE_CREDENTIALS",
    "LOCAL_DEFAULTS",
    "REGION",
    "LocalEnvironment",
    "apply_environment",
    "moto_session",
    "prepare_push_signing_keys",
]

REGION = "us-east-1"

LOCAL_DEFAULTS: Mapping[str, str] = {
    # Deployed, the API Gateway authorizer names the caller; locally there is none.
    "A2A_AUTH_MODE": "none",
    # Webhook receivers in development listen on 127.0.0.1, which deployed stacks refuse (SSRF).
    "A2A_ALLOW_PRIVATE_WEBHOOKS": "true",
    # Deployed, the key set lives in an SSM parameter named after the stack (created on first use);
    # locally, in moto's SSM, created as the stack starts (prepare_push_signing_keys).
    "A2A_PUSH_SIGNING_KEY_PARAMETER": "/a2a-local/push-signing-keys",
    # Local retries come quickly: 1 s, 2 s, 4 s ... capped at 10 s.
    "A2A_PUSH_BACKOFF_BASE_SECONDS": "1",
    "A2A_PUSH_BACKOFF_MAX_SECONDS": "10",
}
"""Template values that cannot hold locally. Like the template's values, the shell's win over them."""

FAKE_CREDENTIALS: Mapping[str, str] = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
}


def moto_session(region: str | None = None) -> Session:
    """A boto3 session for the local stack's moto: its fake credentials and ``region`` (default
    :data:`REGION`), never the user's AWS credentials, which a local process has no business seeing.
    Explicit settings: it works before (or without) :func:`apply_environment`."""
    import boto3

    return boto3.session.Session(
        aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        region_name=region or REGION,
    )


# Anything that could route a boto3 client past the local endpoint or to real credentials.
_REMOVED_PREFIXES = ("AWS_ENDPOINT_URL_",)
_REMOVED = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")


@dataclass(frozen=True, slots=True)
class LocalEnvironment:
    endpoint_url: str
    """The moto server every boto3 client must talk to."""
    template_env: FunctionEnvironment
    """The template's function environment, resolved against the local resources."""
    public_url: str
    executor: str | None = None
    execution_mode: str | None = None
    """``--execution-mode``: wins over the shell's ``A2A_EXECUTION_MODE``."""
    durable_function: str = ""
    """Durable mode: ``A2A_DURABLE_FUNCTION`` unless the shell sets it (the template's is an ``!If``)."""
    push_attempt_log: str = ""
    """``A2A_PUSH_ATTEMPT_LOG``: the file of webhook delivery attempts the console shows."""
    tracing_dir: str = ""
    """Where the processes write their spans (``A2A_TRACING=file``), which the dev API serves;
    tracing stays off when the shell says ``A2A_TRACING=off``."""
    otlp_endpoint: str = ""
    """``--otlp-endpoint``: spans also go to this OTLP/HTTP collector."""


def apply_environment(spec: LocalEnvironment, environ: MutableMapping[str, str] | None = None) -> None:
    """Make ``environ`` (default ``os.environ``) what the deployed functions would see.

    Precedence, lowest first: the template's values, ``LOCAL_DEFAULTS``, the shell's own ``A2A_*`` and
    ``POWERTOOLS_*`` settings, then what the local stack dictates: resource names and URLs, the
    endpoint, fake credentials, ``A2A_STORE=dynamodb``, the public URL, ``--executor`` and
    ``--execution-mode``. In durable mode, ``A2A_DURABLE_FUNCTION`` names the local durable worker
    unless the shell sets it.
    """
    env = os.environ if environ is None else environ
    for key in [k for k in env if k in _REMOVED or k.startswith(_REMOVED_PREFIXES)]:
        del env[key]
    template = spec.template_env
    for key, value in {**template.values, **LOCAL_DEFAULTS}.items():
        if key not in template.resource_keys:
            env.setdefault(key, value)
    env.update({k: template.values[k] for k in template.resource_keys})
    env.update(FAKE_CREDENTIALS)
    env.update(
        {
            # Never read the user's ~/.aws: a profile there could add credentials or endpoints.
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_REGION": REGION,
            "AWS_ENDPOINT_URL": spec.endpoint_url,
            "A2A_STORE": "dynamodb",
            "A2A_PUBLIC_URL": spec.public_url,
        }
    )
    if spec.push_attempt_log:
        env["A2A_PUSH_ATTEMPT_LOG"] = spec.push_attempt_log
    if spec.tracing_dir:
        env.setdefault("A2A_TRACING", "file,otlp" if spec.otlp_endpoint else "file")
        env["A2A_TRACING_DIR"] = spec.tracing_dir
    if spec.otlp_endpoint:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = spec.otlp_endpoint
    if spec.executor:
        env["A2A_EXECUTOR"] = spec.executor
    if spec.execution_mode:
        env["A2A_EXECUTION_MODE"] = spec.execution_mode
    if spec.durable_function and env.get("A2A_EXECUTION_MODE", "").strip().lower() == "durable":
        env.setdefault("A2A_DURABLE_FUNCTION", spec.durable_function)


def prepare_push_signing_keys(endpoint_url: str, environ: Mapping[str, str] | None = None) -> bool:
    """Create the push-signing key set in the stack's SSM now, when signing is on and none exists:
    created on first use instead, it held up the first notification by seconds. Returns whether
    it created one."""
    env = os.environ if environ is None else environ
    name = env.get("A2A_PUSH_SIGNING_KEY_PARAMETER", "")
    if not env_flag(env.get("A2A_PUSH_SIGNING")) or not name:
        return False
    from a2a_serverless.push.signing import SsmKeySource, generate_key_set_text

    source = SsmKeySource(name, client=moto_session().client("ssm", endpoint_url=endpoint_url))
    if source.load() is not None:
        return False
    source.create(generate_key_set_text())
    return True
