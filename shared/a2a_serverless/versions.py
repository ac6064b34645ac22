"""The A2A protocol versions this server speaks, named once (A2A specification, section 3.6 Versioning).

A request, a stored task and a push config each carry one of these: the version a client spoke is
the version its answers, stream events and notifications are rendered in. The values are the wire
strings (``A2A-Version: 1.0``, ``AgentInterface.protocolVersion``), and the type is a ``str``
subclass, so a stored ``"0.3"`` reads back as :attr:`ProtocolVersion.V0_3` and compares equal to
the plain string.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["CURRENT", "SUPPORTED", "ProtocolVersion", "stored_version"]


class ProtocolVersion(StrEnum):
    V1_0 = "1.0"
    """The protocol of this server's core: the v1.0 method names, the HTTP+JSON routes, ProtoJSON."""
    V0_3 = "0.3"
    """Served for compatibility at the edge (:mod:`a2a_serverless.v03`): the slash method names,
    the ``/v1/...`` REST routes, ``kind``-discriminated JSON."""


CURRENT = ProtocolVersion.V1_0
SUPPORTED: tuple[ProtocolVersion, ...] = (ProtocolVersion.V0_3, ProtocolVersion.V1_0)
"""Oldest first, as ``supportedVersions`` in a VersionNotSupported error lists them."""


def stored_version(value: str | None) -> ProtocolVersion:
    """The version recorded with a stored task or config; records written before versions were
    recorded (no value, or one this code does not know) are v1.0."""
    try:
        return ProtocolVersion(value) if value else CURRENT
    except ValueError:
        return CURRENT
