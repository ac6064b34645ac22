"""The agent cards we publish, built from typed configuration (digest section 8)."""

from __future__ import annotations

import hashlib
from typing import Any

from .config import Settings
from .models import AgentCapabilities, AgentCard, AgentInterface, AgentSkill

__all__ = ["LEGACY_PROTOCOL_VERSION", "PROTOCOL_VERSION", "card_etag", "extended_card", "public_card"]

PROTOCOL_VERSION = "1.0"
LEGACY_PROTOCOL_VERSION = "0.3"

_DEMO_SKILLS = [
    AgentSkill(
        id="echo",
        name="Echo",
        description="Replies with an artifact that echoes the text it was sent.",
        tags=["demo", "echo"],
        examples=["hello there"],
    ),
    AgentSkill(
        id="ask",
        name="Multi-turn greeting",
        description="Say 'ask me' and the agent asks for your name, then greets you (INPUT_REQUIRED turn).",
        tags=["demo", "multi-turn"],
        examples=["ask me"],
    ),
]


def _interfaces(base_url: str) -> list[AgentInterface]:
    """Both bindings in both versions, 1.0 first (the first entry is the preferred one). The v0.3
    REST client adds ``/v1/...`` to its URL itself, so both REST entries share the base URL."""
    base = base_url.rstrip("/")
    return [
        AgentInterface(url=url, protocol_binding=binding, protocol_version=version)
        for version in (PROTOCOL_VERSION, LEGACY_PROTOCOL_VERSION)
        for binding, url in (("JSONRPC", base + "/"), ("HTTP+JSON", base))
    ]


def public_card(settings: Settings, base_url: str) -> AgentCard:
    """The card served at ``/.well-known/agent-card.json``; interface URLs point at ``base_url``."""
    fields: dict[str, Any] = {
        "name": settings.agent_name,
        "description": settings.agent_description,
        "version": settings.agent_version,
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [s.to_wire() for s in _DEMO_SKILLS],
    }
    if settings.card_file:
        fields.update(settings.load_card_file(settings.card_file))
    fields["supportedInterfaces"] = [i.to_wire() for i in _interfaces(base_url)]
    capabilities = AgentCapabilities.model_validate(fields.get("capabilities") or {})
    fields["capabilities"] = capabilities.model_copy(
        update={
            "streaming": settings.streaming,
            "push_notifications": settings.push_notifications,
            "extended_agent_card": bool(settings.extended_card_file) or None,
        }
    ).to_wire()
    return AgentCard.model_validate(fields)


def extended_card(settings: Settings, base_url: str) -> AgentCard | None:
    """The extended card (public card overlaid with the extended card file), or None."""
    if not settings.extended_card_file:
        return None
    base = public_card(settings, base_url).to_wire()
    overlay = settings.load_card_file(settings.extended_card_file)
    overlay.pop("supportedInterfaces", None)
    overlay.pop("capabilities", None)
    return AgentCard.model_validate({**base, **overlay})


def card_etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
