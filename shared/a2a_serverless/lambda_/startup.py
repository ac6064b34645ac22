"""What each configured feature needs, checked once before anything is served.

A setting that turns a feature on needs packages, and sometimes other settings, that a request would
otherwise find missing one at a time, each answered with an internal error. :func:`check` looks at
them all up front: each function's cold start calls it (:func:`a2a_serverless.lambda_.preload.cold_start`,
so Lambda reports an init error), and so does the local stack before it starts its processes. A
failure is one :class:`StartupError` line naming what to install or set.

==========================  =================================================================
feature                     needs
==========================  =================================================================
every function              valid settings (:meth:`Settings.from_env`)
tracing (``A2A_TRACING``)   the OpenTelemetry SDK, and its OTLP exporter for ``otlp`` (the
                            ``tracing`` extra)
JWT authorizer              joserfc, cryptography and httpx (the base install); the issuer and
                            audience settings are the settings' own check
card signing                cryptography and joserfc; a key file that exists; a public URL the
                            card can name: ``A2A_PUBLIC_URL``, or API Gateway's (on Lambda, not
                            under ``sam local``, whose API passes the client's ``Host`` as the
                            domain), never the request's ``Host``
durable mode                the durable execution SDK; ``A2A_DURABLE_FUNCTION`` in the functions
                            that start or signal executions (``durable_function``)
the executor                importable and creatable (workers: ``executor``); a framework it
                            imports that is missing names the kit's extra that installs it
==========================  =================================================================

Nothing is imported for a feature that is off, and a package is looked up without importing it
(``find_spec``), except tracing's, whose import is what the first span would need anyway.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator, Mapping
from pathlib import Path

from ..config import ConfigError, Settings, env_flag

__all__ = ["FRAMEWORK_EXTRAS", "StartupError", "check", "executor_failure", "executor_problem", "framework_missing"]

FRAMEWORK_EXTRAS: Mapping[str, str] = {
    "pydantic_ai": "pydantic-ai",
    "langgraph": "langgraph",
    "langchain_core": "langgraph",
    "strands": "strands",
    "agents": "openai-agents",
    "openai": "openai-agents",
    "google.adk": "google-adk",
    "google.genai": "google-adk",
}
"""A framework's module (as a missing import names it) -> the kit's extra that installs it
(``docs/frameworks.md``)."""

_KIT = "pip install 'a2a-serverless'"


class StartupError(ConfigError):
    """A configured feature cannot work here: one line naming what to install or set."""


def check(environ: Mapping[str, str], *, executor: bool = False, durable_function: bool = False) -> Settings:
    """The settings of ``environ``, once every feature they turn on has what it needs. ``executor``:
    this process runs the executor (it is imported and created now); ``durable_function``: it starts
    or signals durable executions. Raises :class:`StartupError` with every problem, in one line."""
    try:
        settings = Settings.from_env(environ)
    except ConfigError as exc:
        raise StartupError(str(exc)) from None
    problems = list(_problems(settings, environ, durable_function=durable_function))
    if executor and not problems and (problem := executor_problem(settings.executor)):
        problems.append(problem)
    if problems:
        raise StartupError("; ".join(problems))
    return settings


def executor_problem(path: str) -> str | None:
    """Why the executor ``path`` names cannot be loaded, in one line (None: it can)."""
    from ..wiring import load_executor

    try:
        load_executor(path)
    except ConfigError as exc:
        return executor_failure(path, exc)
    return None


def executor_failure(path: str, exc: ConfigError) -> str:
    """The line for an executor that failed to load (:func:`framework_missing`'s when it applies)."""
    return framework_missing(path, exc) or str(exc)


def framework_missing(path: str, exc: BaseException) -> str | None:
    """When ``exc`` (or what caused it) is a framework's module not found, the line naming the kit's
    extra that installs it; else None. What ``a2a-serverless dev`` and an ``init`` project's pytest
    say for an agent whose framework is not installed."""
    missing = _missing_module(exc)
    extra = next((e for m, e in FRAMEWORK_EXTRAS.items() if missing == m or missing.startswith(m + ".")), None)
    if extra is None:
        return None
    return f"A2A_EXECUTOR {path!r} needs {missing}, which is not installed: pip install 'a2a-serverless[{extra}]'"


def _missing_module(exc: BaseException) -> str:
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ModuleNotFoundError) and cause.name:
            return cause.name
        cause = cause.__cause__
    return ""


def _problems(settings: Settings, environ: Mapping[str, str], *, durable_function: bool) -> Iterator[str]:
    from ..telemetry import TracingConfigError, checked

    try:
        checked(environ)
    except TracingConfigError as exc:
        yield str(exc)
    if settings.authorizer_mode == "jwt":
        yield from _packages("A2A_AUTHORIZER_MODE=jwt", ("joserfc", "cryptography", "httpx"), _KIT)
    if settings.card_signing_key or settings.card_signing_key_file:
        yield from _packages("card signing", ("cryptography", "joserfc"), _KIT)
        if settings.card_signing_key_file and not Path(settings.card_signing_key_file).is_file():
            yield f"A2A_CARD_SIGNING_KEY_FILE {settings.card_signing_key_file!r} is not a file"
        if not settings.public_url and not _behind_api_gateway(environ):
            yield (
                "card signing needs A2A_PUBLIC_URL (the agent's public base URL, which the signed card names):"
                " without it the card would name whatever Host a request carried"
            )
    if settings.execution_mode == "durable":
        yield from _packages("A2A_EXECUTION_MODE=durable", ("aws_durable_execution_sdk_python",), _KIT)
        if durable_function and not settings.durable_function:
            yield (
                "A2A_EXECUTION_MODE=durable needs A2A_DURABLE_FUNCTION (the durable worker's qualified ARN"
                " or name:alias) to start each task's execution"
            )


def _behind_api_gateway(environ: Mapping[str, str]) -> bool:
    """A Lambda function (not under ``sam local``): its requests come through API Gateway, whose
    event says which of the API's URLs each came to (:func:`..transport._http.gateway_base_url`)."""
    return bool(environ.get("AWS_LAMBDA_FUNCTION_NAME")) and not env_flag(environ.get("AWS_SAM_LOCAL"))


def _packages(feature: str, modules: tuple[str, ...], install: str) -> Iterator[str]:
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        yield f"{feature} needs {', '.join(missing)}, which {verb} not installed: {install}"
