"""GetExtendedAgentCard (spec 3.1.11, 13.3): only for authenticated callers, only if declared;
signed as the public card is, when a card signing key is configured."""

from __future__ import annotations

from ..card import extended_card, signed_card
from ..errors import UnauthenticatedError, UnsupportedOperationError
from ..models import AgentCard, GetExtendedAgentCardRequest
from ..runtime import Runtime
from ._context import CallContext

__all__ = ["get_extended_card"]


def get_extended_card(request: GetExtendedAgentCardRequest, ctx: CallContext, runtime: Runtime) -> AgentCard:
    del request
    card = extended_card(runtime.settings, ctx.base_url)
    if card is None:
        raise UnsupportedOperationError("This agent does not declare an extended agent card")
    if not ctx.principal.authenticated:
        raise UnauthenticatedError(headers={"WWW-Authenticate": 'Bearer realm="a2a"'})
    return signed_card(card, runtime.card_signer, ctx.base_url)
