"""Pydantic models of every A2A v1.0 message (proto ``lf.a2a.v1``) in ProtoJSON wire form.

The agent card's models (:mod:`.card`) are created on first use (PEP 562), as their validators
are (``defer_build``): the functions that never handle a card (the SQS, stream and schedule
functions) do not pay for creating them at their cold start."""

from typing import TYPE_CHECKING

from ._base import ProtoModel, format_timestamp, utc_now
from .core import *  # noqa: F403
from .core import __all__ as _core_all
from .requests import *  # noqa: F403
from .requests import __all__ as _requests_all

if TYPE_CHECKING:
    from .card import *  # noqa: F403

_CARD_ALL = (
    "APIKeySecurityScheme",
    "AgentCapabilities",
    "AgentCard",
    "AgentCardSignature",
    "AgentExtension",
    "AgentInterface",
    "AgentProvider",
    "AgentSkill",
    "AuthorizationCodeOAuthFlow",
    "ClientCredentialsOAuthFlow",
    "DeviceCodeOAuthFlow",
    "HTTPAuthSecurityScheme",
    "ImplicitOAuthFlow",
    "MutualTlsSecurityScheme",
    "OAuth2SecurityScheme",
    "OAuthFlows",
    "OpenIdConnectSecurityScheme",
    "PasswordOAuthFlow",
    "SecurityRequirement",
    "SecurityScheme",
    "StringList",
)
""":mod:`.card`'s ``__all__`` (tests/functions/test_import_footprint.py checks they agree)."""

__all__ = ["ProtoModel", "format_timestamp", "utc_now", *_CARD_ALL, *_core_all, *_requests_all]


def __getattr__(name: str) -> object:
    if name not in _CARD_ALL:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import card

    return getattr(card, name)
