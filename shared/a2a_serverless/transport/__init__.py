"""Transports: the Starlette app serving JSON-RPC, HTTP+JSON (REST) and the agent card."""

from .app import CARD_PATH, create_app

__all__ = ["CARD_PATH", "create_app"]
