"""Typed configuration, read once from the environment at cold start.

Every setting has an ``A2A_`` environment variable. ``Settings.from_env(mapping)`` validates them all
up front, so a bad value fails the cold start with a clear message instead of the first request.
Tests pass a mapping; nothing here mutates ``os.environ``.
"""

import json
import os
from collections.abc import Mapping
from dataclasses import Field, dataclass, field, fields
from pathlib import Path
from types import UnionType
from typing import Literal, Self, TypeVar, get_args, get_origin
from urllib.parse import urlsplit

from .json_types import Json

__all__ = ["ConfigError", "Settings", "card_fields", "env_flag"]

DEMO_EXECUTOR = "a2a_serverless.execution.demo:DemoAgentExecutor"
DYNAMODB_COMMIT_INTERVAL_SECONDS = 0.05
"""The commit interval of a run on DynamoDB unless ``A2A_COMMIT_INTERVAL_SECONDS`` says otherwise."""


def env_flag(value: str | None) -> bool:
    """An environment variable's yes: ``1``, ``true``, ``yes`` or ``on`` (any case; unset: no), as
    every boolean setting reads it."""
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


T = TypeVar("T", int, float)


_CARD_DEFAULTS: Json = {
    "name": "agent",
    "description": "agent",
    "version": "0",
    "supportedInterfaces": [],
    "capabilities": {},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [],
}


class ConfigError(RuntimeError):
    """Configuration is invalid: raised at cold start, never per request."""


def _bounded(default: T, *, gt: float | None = None, ge: float | None = None, le: float | None = None) -> T:
    """A number setting with its bounds (checked by :meth:`Settings.__post_init__`)."""
    bounds = {name: bound for name, bound in (("gt", gt), ("ge", ge), ("le", le)) if bound is not None}
    return field(default=default, metadata=bounds)


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Every setting, validated on construction (:class:`ConfigError` naming each bad one)."""

    store: Literal["dynamodb", "memory"] = "dynamodb"
    """Where tasks live. ``memory`` is for tests and benchmarks of the protocol layer only."""
    table_name: str = ""
    queue_url: str = ""
    executor: str = DEMO_EXECUTOR
    """Import path ``package.module:Class`` of the AgentExecutor the worker runs."""

    public_url: str = ""
    """The agent's public base URL: what the agent card names (its interfaces, a signature's
    ``jku``), where delegated agents push, the push tokens' issuer. Empty: on API Gateway, the URL
    API Gateway says each request came to; elsewhere, for an unsigned card only, the request's own
    (:func:`a2a_serverless.transport._http.base_url`)."""
    agent_name: str = ""
    agent_description: str = ""
    agent_version: str = ""
    """The card's name, description and version when set (empty: the executor's card, see
    :mod:`a2a_serverless.card`)."""
    card_file: str = ""
    """A JSON file with the public card's fields (name, description, skills, ...): overrides the above, and
    is the whole of the agent's card (the executor class is then not imported to render it)."""
    extended_card_file: str = ""
    """A JSON file with the extended card; with it, capabilities.extendedAgentCard is declared."""
    streaming: bool = True
    push_notifications: bool = True

    auth_mode: Literal["none", "api-key", "apigateway"] = "none"
    """``none``: every caller is the principal ``anonymous``. ``api-key``: ``Authorization: Bearer <key>``
    looked up in ``api_keys``. ``apigateway``: the principal set by an API Gateway authorizer."""
    api_keys: dict[str, str] = field(default_factory=dict)
    """Key -> principal name, for ``auth_mode=api-key`` (A2A_API_KEYS as a JSON object)."""
    api_auth: Literal["open", "jwt", "aws_iam"] = "open"
    """Who API Gateway lets in, with ``auth_mode=apigateway``: the template's ``AuthMode`` (``Open``, ``Jwt``,
    ``AWS_IAM``; any case). The agent card declares it (``securitySchemes``, ``securityRequirements``)."""
    authorizer_mode: Literal["none", "jwt"] = "none"
    """The API's Lambda REQUEST authorizer (``functions/authorizer.py``). ``none``: every request is allowed as
    ``anonymous``. ``jwt``: ``Authorization: Bearer <JWT>`` must be signed (RS256/ES256) by ``jwt_issuer``."""
    jwt_issuer: str = ""
    """The OIDC issuer, an https URL equal to the tokens' ``iss`` (Cognito:
    ``https://cognito-idp.<region>.amazonaws.com/<poolId>``). Its keys are found through
    ``<issuer>/.well-known/openid-configuration`` unless ``jwt_jwks_url`` is set."""
    jwt_audience: str = ""
    """A token's ``aud`` must contain it or, in a Cognito access token (``token_use`` ``access``, no ``aud``),
    its ``client_id`` equal it (:func:`a2a_serverless.jwt.check_oidc_audience`; Cognito ID tokens count by ``aud``).
    Required with ``authorizer_mode=jwt``: without it, any token of the issuer, minted for another app, would do."""
    jwt_jwks_url: str = ""
    """The issuer's JWKS (an https URL), skipping discovery."""
    allow_private_webhooks: bool = False
    """Development only: accept http and loopback/private webhook URLs."""
    tenants: tuple[str, ...] = ()
    """If set, the only tenants accepted (comma-separated); empty accepts any."""

    push_queue_url: str = ""
    """The FIFO queue of push deliveries: the dispatcher fills it, the delivery function drains it."""
    push_dead_letter_queue_url: str = ""
    """Where deliveries that failed for good are parked (``a2a-serverless push-redrive`` replays them)."""
    card_signing_key: str = ""
    """An AWS KMS asymmetric RSA key (id, ARN or alias) that signs the public and extended cards
    (RS256 JWS; the template's ``CardSigningKey`` with ``CardSigning=true``). Empty: unsigned."""
    card_signing_key_file: str = ""
    """The same with an RSA private key in a PEM file (the local stack, tests)."""
    push_signing: bool = False
    """Sign every notification (ES256 JWT, keys published at ``/.well-known/jwks.json``)."""
    push_signing_key_parameter: str = ""
    """SSM SecureString parameter holding the signing key set (created on first use)."""
    push_timeout_seconds: float = _bounded(10.0, gt=0, le=60)
    """Per-request timeout of a webhook POST (the spec recommends 10-30 s)."""
    push_max_attempts: int = _bounded(10, ge=1, le=100)
    """Attempts per delivery before it is dead-lettered (timeouts, connection errors, 408, 429, 5xx)."""
    push_backoff_base_seconds: float = _bounded(2.0, ge=0, le=3600)
    push_backoff_max_seconds: float = _bounded(900.0, ge=0, le=43200)
    """Retry n waits about base * 2**(n-1), capped, with jitter (or the receiver's Retry-After)."""
    push_token_ttl_seconds: int = _bounded(300, ge=30, le=3600)
    """Lifetime (``exp - iat``) of a notification's signed JWT."""
    push_wait_seconds: float = _bounded(5.0, ge=0, le=900)
    """The most a blocking SendMessage whose task has webhooks waits, once the task settled, for the
    push of the state it answers with to be delivered or tried (a failed attempt counts), so a
    client reads it at its webhook as soon as it has the answer; never past ``blocking_wait_seconds``
    from the call's start. 0: answer as soon as the task settled (the push follows)."""
    push_attempt_log: str = ""
    """Local stack only (``a2a-serverless dev`` sets it): a file to which every webhook delivery
    attempt appends one JSON line (ids, seq, attempt, status, latency, outcome; never a URL or a
    secret) for the console's timeline. Empty (the default, and deployed): nothing is recorded."""

    lenient_missing_version: bool = False
    """Serve requests without ``A2A-Version`` as 1.0 instead of rejecting them as 0.3."""
    execution_mode: Literal["queue", "durable"] = "queue"
    """How tasks run: ``queue`` (SQS work items, the worker function) or ``durable`` (one Lambda
    durable execution per task: docs/durable-tasks.md)."""
    durable_function: str = ""
    """Durable mode: the qualified ARN (or name:alias) of the durable worker function."""
    input_wait_seconds: int = _bounded(604800, ge=1, le=31_536_000)
    """Durable mode: how long a task waiting for input keeps its execution waiting; then it fails."""
    durable_invocation_seconds: int = _bounded(900, ge=1, le=900)
    """Durable mode: one invocation's time limit (the durable worker's Timeout)."""
    durable_step_seconds: int = _bounded(300, ge=1, le=900)
    """Durable mode: the longest one step of an executor may take. When less than that is left of
    an invocation after a step, the run goes on in a new invocation (a one-second durable wait)."""
    idempotent_send: bool = True
    """A re-sent SendMessage (same messageId, same message and configuration) returns the task the
    first one made and runs nothing. False: messageIds are not looked at, every SendMessage is a new
    message, as in the reference servers (an ``Idempotency-Key`` header still de-duplicates)."""
    message_id_reuse: Literal["new", "reject"] = "new"
    """A messageId reused for a different message or configuration (with ``idempotent_send``):
    ``new`` processes it as the new message it is, as if the id were fresh (logged once at INFO);
    ``reject`` refuses it with InvalidParams naming the messageId, and nothing is stored."""
    blocking_wait_seconds: float = _bounded(25.0, gt=0, le=900)
    """How long a blocking SendMessage waits for a terminal or interrupted state before it returns
    the task as it is. Keep it below API Gateway's 29 s integration timeout."""
    cancel_wait_seconds: float = _bounded(3.0, ge=0, le=60)
    """How long CancelTask waits for a running worker to acknowledge the cancel."""
    poll_interval_seconds: float = _bounded(0.05, gt=0, le=5)
    stream_poll_seconds: float = _bounded(0.05, gt=0, le=5)
    """How often a stream reads the task's event log while events flow."""
    commit_interval_seconds: float | None = field(default=None, metadata={"ge": 0, "le": 5})
    """The least time between the starts of two commits of one run's events: what an agent emits
    meanwhile goes out in the next commit (an event that ends the run is committed at once). Unset,
    it is the store's (:attr:`commit_interval`). With DynamoDB every commit rewrites the task's head
    item, so an answer streamed slower than commits take costs a head write per chunk with 0. The
    price is latency: a chunk waits up to this long for its commit (``bench/compare.py``: about
    +20-30 ms at the median for a chunk every 30 ms); 0 trades the head writes back for it."""
    stream_idle_poll_seconds: float = _bounded(1.0, gt=0, le=30)
    """The slowest it reads when the task has been quiet for a while."""
    stream_ping_seconds: float = _bounded(15.0, gt=0, le=300)
    """Interval of ``: ping`` comments that keep proxies and API Gateway from closing idle streams."""
    stream_max_seconds: float = _bounded(840.0, gt=0, le=3600)
    """A stream ends cleanly after this long (below the function timeout); clients resume with
    ``Last-Event-ID`` on SubscribeToTask."""
    run_lease_seconds: int = _bounded(60, ge=3, le=3600)
    """A running task's lease: its worker renews it every third of this while the run is alive;
    the sweeper (every minute) fails a task whose lease lapsed, so a dead worker is noticed within
    about this plus a minute."""
    max_body_bytes: int = _bounded(5 * 1024 * 1024, ge=1024, le=10 * 1024 * 1024)
    """The largest request body taken (larger: a spec-shaped error). On AWS a request reaches a
    function inside Lambda's 6 MB synchronous invocation payload, with the API Gateway event around
    it (headers, the body JSON-escaped); 5 MiB leaves that room (``docs/large-content.md``)."""
    blob_bucket: str = ""
    """The S3 bucket for large parts (the template's ``BlobsBucket``). With the DynamoDB store and no
    bucket, a part that does not fit an item fails as it did before there was one."""
    blob_threshold_bytes: int = _bounded(32 * 1024, ge=1024, le=256 * 1024)
    """A part whose content (text, raw bytes or data JSON) is this large or larger is stored as an
    object, with only a pointer in the task."""
    blob_url_seconds: int = _bounded(900, ge=60, le=12 * 3600)
    """Lifetime of the presigned GET URL a client gets for a stored part it is not sent inline."""
    inline_response_bytes: int = _bounded(4 * 1024 * 1024, ge=0, le=5 * 1024 * 1024)
    """How many bytes of stored parts (as encoded in JSON) a buffered response carries inline; the
    rest are ``url`` parts. Lambda's buffered response is at most 6 MB, envelope included."""
    inline_stream_bytes: int = _bounded(1024 * 1024, ge=0, le=16 * 1024 * 1024)
    """The same, per SSE event."""
    inline_push_bytes: int = _bounded(0, ge=0, le=4 * 1024 * 1024)
    """The same, per push notification: none by default, since webhook receivers commonly refuse
    bodies over 100 KB to 1 MB; a stored part reaches a webhook as a ``url`` part."""
    max_history: int = _bounded(200, ge=1)
    """Messages kept in a task's stored history (oldest dropped first)."""
    task_ttl_days: int = _bounded(30, ge=0)
    """Days after which DynamoDB's TTL removes a task and its events (0 keeps them forever)."""

    @property
    def commit_interval(self) -> float:
        """``commit_interval_seconds``, or when unset the store's: 0.05 s with DynamoDB (a commit is
        a billed write of the head item), 0 in memory (a commit costs nothing, so nothing waits)."""
        if self.commit_interval_seconds is not None:
            return self.commit_interval_seconds
        return DYNAMODB_COMMIT_INTERVAL_SECONDS if self.store == "dynamodb" else 0.0

    @property
    def signs_cards(self) -> bool:
        """Whether the agent cards are signed (a KMS key or a key file is configured)."""
        return bool(self.card_signing_key or self.card_signing_key_file)

    def __post_init__(self) -> None:
        # Settings are plain data, checked here (not by pydantic: a function that reads only its
        # settings, the authorizer, then does not import pydantic at its cold start).
        problems: list[str] = []
        for each in fields(self):
            try:
                value = _checked(each, getattr(self, each.name))
            except ValueError as exc:
                problems.append(f"A2A_{each.name.upper()}: {exc}")
            else:
                object.__setattr__(self, each.name, value)
        if isinstance(self.executor, str) and not all(self.executor.partition(":")):
            problems.append("A2A_EXECUTOR: must look like 'package.module:ClassName'")
        if problems:
            raise ConfigError(f"invalid configuration: {'; '.join(problems)}")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Self:
        env = os.environ if env is None else env
        variables = {"A2A_" + each.name.upper(): each for each in fields(cls)}
        raw = {each.name: _from_text(each, key, env[key]) for key, each in variables.items() if key in env}
        settings = cls(**raw)  # type: ignore[arg-type]  # each value is checked by __post_init__
        settings._check_together()
        return settings

    def _check_together(self) -> None:
        """The rules between settings (``__post_init__`` checks one setting at a time)."""
        if "v1" in self.tenants:
            raise ConfigError("A2A_TENANTS: 'v1' cannot be a tenant (/v1/... is the v0.3 REST binding)")
        if self.store == "dynamodb" and not self.table_name:
            raise ConfigError("A2A_TABLE_NAME is required when A2A_STORE=dynamodb")
        for card_file in (self.card_file, self.extended_card_file):
            if card_file:
                self.load_card_file(card_file)  # a bad card file fails the cold start, not a request
        if self.card_signing_key and self.card_signing_key_file:
            raise ConfigError("A2A_CARD_SIGNING_KEY and A2A_CARD_SIGNING_KEY_FILE: set one of them, not both")
        if self.push_signing and not self.push_signing_key_parameter:
            raise ConfigError("A2A_PUSH_SIGNING_KEY_PARAMETER is required when A2A_PUSH_SIGNING=true")
        if self.auth_mode == "api-key" and not self.api_keys:
            raise ConfigError("A2A_API_KEYS is required when A2A_AUTH_MODE=api-key")
        if self.authorizer_mode == "jwt" and not _is_https_url(self.jwt_issuer):
            raise ConfigError("A2A_JWT_ISSUER (an https URL) is required when A2A_AUTHORIZER_MODE=jwt")
        if self.authorizer_mode == "jwt" and not self.jwt_audience:
            raise ConfigError(
                "A2A_JWT_AUDIENCE is required when A2A_AUTHORIZER_MODE=jwt (without it, tokens the issuer"
                " minted for any other app would be accepted)"
            )
        if self.api_auth == "jwt" and not _is_https_url(self.jwt_issuer):
            raise ConfigError("A2A_JWT_ISSUER (an https URL) is required when A2A_API_AUTH=jwt (the card names it)")
        if self.public_url and not _is_http_url(self.public_url):
            raise ConfigError("A2A_PUBLIC_URL must be the agent's absolute base URL (https://agent.example.com/...)")
        if self.jwt_jwks_url and not _is_https_url(self.jwt_jwks_url):
            raise ConfigError("A2A_JWT_JWKS_URL must be an https URL")

    def load_card_file(self, path: str) -> Json:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(f"cannot read agent card file {path!r}: {exc.__class__.__name__}") from exc
        return card_fields(data, f"agent card file {path!r}")


def _from_text(setting: Field[object], variable: str, text: str) -> object:
    """A setting's environment ``variable`` as the value :func:`_checked` takes: JSON for ``api_keys``,
    a comma-separated list for ``tenants``, :func:`env_flag` for a flag; else the text itself."""
    if setting.name == "api_keys":
        try:
            return json.loads(text or "{}")
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{variable} must be a JSON object of key -> principal") from exc
    if setting.name == "tenants":
        return tuple(t.strip() for t in text.split(",") if t.strip())
    return env_flag(text) if setting.type is bool else text


def card_fields(data: object, source: str) -> Json:
    """``data`` (from ``source``, named in errors) as fields that overlay a card: a JSON object that makes a
    valid AgentCard with the rest filled in. Raises ``ConfigError`` otherwise."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source} must hold a JSON object")
    # Imported here, not at module level: the models (and pydantic) are the card's and the core's,
    # and a function that reads only its settings (the authorizer) must not pay for them at every
    # cold start.
    from pydantic import ValidationError

    from .models import AgentCard

    try:
        AgentCard.model_validate({**_CARD_DEFAULTS, **data})
    except ValidationError as exc:
        raise ConfigError(f"{source} is not a valid AgentCard: {exc}") from exc
    return dict(data)


def _checked(setting: Field[object], value: object) -> object:
    """``value`` as the setting's type (numbers may come as text, as from the environment), within
    its bounds; ValueError says what is wrong. An optional number is None when unset or empty."""
    kind = setting.type
    if isinstance(kind, UnionType) and type(None) in get_args(kind):
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        (kind,) = (each for each in get_args(kind) if each is not type(None))
    if get_origin(kind) is Literal:
        choices = get_args(kind)
        lowered = value.lower() if isinstance(value, str) and setting.name in _CASE_INSENSITIVE else value
        if lowered not in choices:
            raise ValueError(f"must be one of {', '.join(map(repr, choices))}")
        return lowered
    if kind is bool or kind is str:
        if not isinstance(value, kind):
            raise ValueError(f"must be a {kind.__name__}")
        return value
    if kind is int or kind is float:
        return _bounds(setting, _number(kind, value))
    if setting.name == "tenants":
        if not isinstance(value, (tuple, list)) or not all(isinstance(t, str) for t in value):
            raise ValueError("must be a list of tenant names")
        return tuple(value)
    # api_keys: key -> principal name
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ValueError("must be a JSON object of key -> principal")
    return dict(value)


_CASE_INSENSITIVE = frozenset({"api_auth", "message_id_reuse"})
"""Literal settings accepted in any case (the template's ``AuthMode`` is ``Open``, ``Jwt``, ``AWS_IAM``)."""


def _number(kind: type[float], value: object) -> float:
    if isinstance(value, bool):
        raise ValueError(f"must be {'an integer' if kind is int else 'a number'}")
    if isinstance(value, str):
        try:
            return kind(value.strip())
        except ValueError:
            raise ValueError(f"must be {'an integer' if kind is int else 'a number'}, not {value!r}") from None
    if kind is int and isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int) or (kind is float and isinstance(value, float)):
        return kind(value)
    raise ValueError(f"must be {'an integer' if kind is int else 'a number'}")


def _bounds(setting: Field[object], value: float) -> float:
    limits = setting.metadata
    if "gt" in limits and not value > limits["gt"]:
        raise ValueError(f"must be greater than {limits['gt']}")
    if "ge" in limits and not value >= limits["ge"]:
        raise ValueError(f"must be at least {limits['ge']}")
    if "le" in limits and not value <= limits["le"]:
        raise ValueError(f"must be at most {limits['le']}")
    return value


def _is_https_url(value: str) -> bool:
    try:
        parts = urlsplit(value)
        return parts.scheme == "https" and bool(parts.hostname)
    except ValueError:
        return False


def _is_http_url(value: str) -> bool:
    """An absolute http(s) URL with a host, and no query or fragment (a base URL paths are added to)."""
    try:
        parts = urlsplit(value)
        return parts.scheme in {"http", "https"} and bool(parts.hostname) and not parts.query and not parts.fragment
    except ValueError:
        return False
