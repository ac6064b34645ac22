"""GetExtendedAgentCard (spec 3.1.11, 13.3): only for authenticated callers, only if declared;
signed as the public card is, when a card signing key is configured (and then refused, as the public
card is, without a base URL the agent can trust: :func:`..transport._http.base_url`)."""

from __future__ import annotations

from ..card import PUBLIC_URL_NEEDED, extended_card, signed_card
from ..config import ConfigError
from ..errors import UnauthenticatedError, UnsupportedOperationError
from ..models import AgentCard, GetExtendedAgentCardRequest
from ..runtime import Runtime
from ._context import CallContext

__all__ = ["get_extended_card"]


def get_extended_card(request: GetExtendedAgentCardRequest, ctx: CallContext, runtime: Runtime) -> AgentCard:
    del request
    if not runtime.settings.extended_card_file:
        raise UnsupportedOperationError("This agent does not declare an extended agent card")
    if not ctx.principal.authenticated:
        raise UnauthenticatedError(headers={"WWW-Authenticate": 'Bearer realm="a2a"'})
    if not ctx.base_url:  # a signed card, and no URL to trust (never the request's Host)
        raise ConfigError(PUBLIC_URL_NEEDED)
    card = extended_card(runtime.settings, ctx.base_url)
    assert card is not None  # an extended card file is configured
    return signed_card(card, runtime.card_signer, ctx.base_url)
