"""The agent card and its parts (proto ``lf.a2a.v1``, A2A specification, section 4.4.1 AgentCard).

Required repeated fields of the card (``skills``, ``defaultInputModes``...) are tolerated empty on
input: A2A specification, section 5.7 Field Presence and Optionality asks for at least one element, and its own
example in section 8.4.1 Canonicalization Requirements has ``"skills": []``; the card we publish is built from
validated configuration.
"""

from __future__ import annotations

from typing import List  # noqa: UP035 - StringList has a field called "list"

from ..json_types import Json
from ._base import NonEmptyStr, ProtoModel

__all__ = [
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
]


class AgentInterface(ProtoModel):
    url: NonEmptyStr
    protocol_binding: NonEmptyStr
    tenant: str = ""
    protocol_version: NonEmptyStr


class AgentProvider(ProtoModel):
    url: NonEmptyStr
    organization: NonEmptyStr


class AgentExtension(ProtoModel):
    uri: str = ""
    description: str = ""
    required: bool = False
    params: Json | None = None


class AgentCapabilities(ProtoModel):
    streaming: bool | None = None
    push_notifications: bool | None = None
    extensions: list[AgentExtension] = []
    extended_agent_card: bool | None = None


class StringList(ProtoModel):
    list: List[str] = []  # noqa: UP006


class SecurityRequirement(ProtoModel):
    schemes: dict[str, StringList] = {}


class AgentSkill(ProtoModel):
    id: NonEmptyStr
    name: NonEmptyStr
    description: NonEmptyStr
    tags: list[str] = []
    examples: list[str] = []
    input_modes: list[str] = []
    output_modes: list[str] = []
    security_requirements: list[SecurityRequirement] = []


class AgentCardSignature(ProtoModel):
    protected: NonEmptyStr
    signature: NonEmptyStr
    header: Json | None = None


class APIKeySecurityScheme(ProtoModel):
    description: str = ""
    location: NonEmptyStr
    name: NonEmptyStr


class HTTPAuthSecurityScheme(ProtoModel):
    description: str = ""
    scheme: NonEmptyStr
    bearer_format: str = ""


class AuthorizationCodeOAuthFlow(ProtoModel):
    authorization_url: NonEmptyStr
    token_url: NonEmptyStr
    refresh_url: str = ""
    scopes: dict[str, str] = {}
    pkce_required: bool = False


class ClientCredentialsOAuthFlow(ProtoModel):
    token_url: NonEmptyStr
    refresh_url: str = ""
    scopes: dict[str, str] = {}


class ImplicitOAuthFlow(ProtoModel):
    authorization_url: str = ""
    refresh_url: str = ""
    scopes: dict[str, str] = {}


class PasswordOAuthFlow(ProtoModel):
    token_url: str = ""
    refresh_url: str = ""
    scopes: dict[str, str] = {}


class DeviceCodeOAuthFlow(ProtoModel):
    device_authorization_url: NonEmptyStr
    token_url: NonEmptyStr
    refresh_url: str = ""
    scopes: dict[str, str] = {}


class OAuthFlows(ProtoModel):
    _oneofs = {"flow": ("authorization_code", "client_credentials", "implicit", "password", "device_code")}
    _required_oneofs = frozenset({"flow"})

    authorization_code: AuthorizationCodeOAuthFlow | None = None
    client_credentials: ClientCredentialsOAuthFlow | None = None
    implicit: ImplicitOAuthFlow | None = None
    password: PasswordOAuthFlow | None = None
    device_code: DeviceCodeOAuthFlow | None = None


class OAuth2SecurityScheme(ProtoModel):
    description: str = ""
    flows: OAuthFlows
    oauth2_metadata_url: str = ""


class OpenIdConnectSecurityScheme(ProtoModel):
    description: str = ""
    open_id_connect_url: NonEmptyStr


class MutualTlsSecurityScheme(ProtoModel):
    description: str = ""


class SecurityScheme(ProtoModel):
    _oneofs = {
        "scheme": (
            "api_key_security_scheme",
            "http_auth_security_scheme",
            "oauth2_security_scheme",
            "open_id_connect_security_scheme",
            "mtls_security_scheme",
        )
    }
    _required_oneofs = frozenset({"scheme"})

    api_key_security_scheme: APIKeySecurityScheme | None = None
    http_auth_security_scheme: HTTPAuthSecurityScheme | None = None
    oauth2_security_scheme: OAuth2SecurityScheme | None = None
    open_id_connect_security_scheme: OpenIdConnectSecurityScheme | None = None
    mtls_security_scheme: MutualTlsSecurityScheme | None = None


class AgentCard(ProtoModel):
    name: NonEmptyStr
    description: NonEmptyStr
    supported_interfaces: list[AgentInterface] = []
    provider: AgentProvider | None = None
    version: NonEmptyStr
    documentation_url: str | None = None
    capabilities: AgentCapabilities
    security_schemes: dict[str, SecurityScheme] = {}
    security_requirements: list[SecurityRequirement] = []
    default_input_modes: list[str] = []
    default_output_modes: list[str] = []
    skills: list[AgentSkill] = []
    signatures: list[AgentCardSignature] = []
    icon_url: str | None = None
