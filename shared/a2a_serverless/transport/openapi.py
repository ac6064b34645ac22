"""An OpenAPI 3.1 description of the HTTP+JSON binding (v1.0), generated, never written by hand.

Everything comes from the sources the app itself is built from, so the two cannot drift:

* the paths and verbs from the method table (``methods.METHODS``), each also under ``/{tenant}``
  exactly as :func:`.rest.rest_routes` serves them (the v0.3 ``/v1`` routes are not described);
* path parameters from the route templates, query parameters (GET and DELETE) from the request
  model's remaining scalar fields, request bodies (POST, ``body: "*"``) from the request model;
* the success response from the operation's return annotation (an SSE stream of
  ``StreamResponse`` for streaming methods, ``{}`` for ``google.protobuf.Empty``), and every error
  as the ``{"error": {code, status, message, details}}`` shape (A2A specification, section 11.6 Error Handling);
* schemas from the pydantic models in their ProtoJSON form (camelCase names, enums by name,
  ``bytes`` as base64, a required ``oneof`` as "exactly one of").

The document is for clients, generators and the fuzzing suite; the app does not serve it
(``a2a-serverless openapi`` prints it).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel
from pydantic.alias_generators import to_camel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue, models_json_schema
from pydantic_core import core_schema

from ..json_types import Json
from ..methods import METHODS, MethodInfo, RestRoute
from ..models import ProtoModel, SendMessageRequest, StreamResponse
from ..operations._context import IDEMPOTENCY_KEY_HEADER, MAX_ID_LENGTH, RESERVED_TENANT
from ..versions import CURRENT
from .rest import REST_MEDIA_TYPE, TENANT_PREFIX

__all__ = ["OPENAPI_VERSION", "openapi_document", "rest_operations"]

OPENAPI_VERSION = "3.1.0"
_REF = "#/components/schemas/{model}"
_PATH_PARAM = re.compile(r"\{(\w+)\}")
_QUERY_TYPES = frozenset({"string", "integer", "boolean"})

# google.rpc.Code names: the ``status`` of a REST error.
_GRPC_CODES = (
    "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
    "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
    "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
)  # fmt: skip


def rest_operations() -> list[tuple[MethodInfo, RestRoute, str]]:
    """Every v1.0 REST operation: (method, route, prefix), the prefix being ``""`` or the tenant's."""
    return [(m, r, prefix) for prefix in ("", TENANT_PREFIX) for m in METHODS for r in m.routes]


def openapi_document(*, title: str = "A2A agent (HTTP+JSON binding)", version: str = CURRENT) -> Json:
    """The OpenAPI 3.1 document of the REST binding, as a JSON-ready dict."""
    components = _schemas()
    paths: dict[str, Json] = {}
    for method, route, prefix in rest_operations():
        paths.setdefault(prefix + route.path, {})[route.verb.lower()] = _operation(method, route, prefix, components)
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": title,
            "version": version,
            "description": "The A2A protocol v1.0 HTTP+JSON binding. Every path also exists under a /{tenant} "
            "prefix. Fields use ProtoJSON (camelCase names; snake_case is accepted on input).",
        },
        "paths": paths,
        "components": {"schemas": components},
    }


def _operation(method: MethodInfo, route: RestRoute, prefix: str, components: Json) -> Json:
    request = components[method.request.__name__]
    bound = _PATH_PARAM.findall(prefix + route.path)
    verb = route.verb.title() if len(method.routes) > 1 else ""  # SubscribeToTask: GET and POST
    operation_id = method.name + verb + ("ForTenant" if prefix else "")
    parameters = [_path_parameter(name, request) for name in bound]
    parameters.append(
        {
            "name": "A2A-Version",
            "in": "header",
            "required": True,
            "description": "The protocol version (Major.Minor; a patch is ignored). May be sent as a query "
            "parameter instead; without it the request is 0.3 and refused.",
            "schema": {"type": "string", "pattern": r"^1\.0(\.[0-9]+)?$"},
        }
    )
    if method.streaming:
        parameters.append(
            {
                "name": "Last-Event-ID",
                "in": "header",
                "required": False,
                "description": "Resume after this event (the SSE id of the last event received).",
                "schema": {"type": "string", "pattern": "^[0-9]{1,18}$"},
            }
        )
    if method.request is SendMessageRequest:
        parameters.append(
            {
                "name": IDEMPOTENCY_KEY_HEADER,
                "in": "header",
                "required": False,
                "description": "Ahead of the A2A specification (a2aproject/A2A issue 1987): a retry of this "
                "request under the same key answers with the first one's task and runs nothing (a stream "
                "resumes its events); another request under it is refused. Per caller; expires with the task.",
                "schema": {"type": "string", "minLength": 1, "maxLength": MAX_ID_LENGTH, "pattern": "^[ -~]+$"},
            }
        )
    spec: Json = {"operationId": operation_id, "tags": [method.name], "parameters": parameters}
    if route.verb in ("GET", "DELETE"):
        parameters.extend(_query_parameters(request, {*bound, "tenant"}))
    else:
        required = set(request.get("required", ())) - {to_camel(name) for name in bound}
        body = {"schema": {"$ref": _REF.format(model=method.request.__name__)}}
        spec["requestBody"] = {"required": bool(required), "content": {REST_MEDIA_TYPE: body, "application/json": body}}
    spec["responses"] = {"200": _success(method), "default": _error_response()}
    return spec


def _path_parameter(name: str, request: Json) -> Json:
    schema: Json = {"type": "string", "minLength": 1, "maxLength": MAX_ID_LENGTH, "pattern": "^[^/]+$"}
    if name == "tenant":
        schema["not"] = {"const": RESERVED_TENANT}
    description = request["properties"].get(to_camel(name), {}).get("description")
    parameter = {"name": name, "in": "path", "required": True, "schema": schema}
    return {**parameter, "description": description} if description else parameter


def _query_parameters(request: Json, bound: set[str]) -> list[Json]:
    """The request's scalar fields not bound in the path, as camelCase query parameters (spec 11.5:
    nested objects are not supported in the query)."""
    skip = {to_camel(name) for name in bound}
    parameters = []
    for name, schema in request.get("properties", {}).items():
        branches = [s for s in schema.get("anyOf", [schema]) if s.get("type") != "null"]
        if name in skip or len(branches) != 1:
            continue
        value = {k: v for k, v in branches[0].items() if k != "default"}
        if value.get("type") not in _QUERY_TYPES and "$ref" not in value:
            continue
        parameters.append({"name": name, "in": "query", "required": False, "schema": value})
    return parameters


def _success(method: MethodInfo) -> Json:
    if method.streaming:
        event = {"$ref": _REF.format(model=StreamResponse.__name__)}
        return {
            "description": "A Server-Sent Events stream; each event's data is one StreamResponse.",
            "content": {"text/event-stream": {"schema": event}},
        }
    result = method.response
    if result is None:
        schema: Json = {"type": "object", "maxProperties": 0}
    else:
        schema = {"$ref": _REF.format(model=result.__name__)}
    return {"description": "OK", "content": {REST_MEDIA_TYPE: {"schema": schema}}}


def _error_response() -> Json:
    return {
        "description": "An error: google.rpc.Status wrapped in 'error', code being the HTTP status.",
        "content": {REST_MEDIA_TYPE: {"schema": {"$ref": _REF.format(model="Error")}}},
    }


def _response_models() -> list[type[BaseModel]]:
    models: list[type[BaseModel]] = [StreamResponse]
    models.extend(m.response for m in METHODS if m.response is not None and not m.streaming)
    return models


class _ProtoJsonSchema(GenerateJsonSchema):
    """Pydantic's JSON Schema, adjusted to ProtoJSON: no per-field titles, ``bytes`` as base64, and
    the rules the models enforce in validators (a required ``oneof``; fields always emitted)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def bytes_schema(self, schema: core_schema.BytesSchema) -> JsonSchemaValue:
        return {"type": "string", "format": "byte", "contentEncoding": "base64"}

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        value = super().model_schema(schema)
        cls = schema["cls"]
        if not (isinstance(cls, type) and issubclass(cls, ProtoModel)):
            return value
        aliases = {name: field.alias or name for name, field in cls.model_fields.items()}
        groups = [cls._oneofs[group] for group in sorted(cls._required_oneofs)]
        if len(groups) == 1:
            value["oneOf"] = [{"required": [aliases[member]]} for member in groups[0]]
        elif groups:
            value["allOf"] = [{"oneOf": [{"required": [aliases[m]]} for m in members]} for members in groups]
        if cls._always_emit:
            value["required"] = sorted({*value.get("required", ()), *(aliases[n] for n in cls._always_emit)})
        return value


def _schemas() -> Json:
    models = [m.request for m in METHODS] + _response_models()
    mode: JsonSchemaMode = "validation"  # the wire shape; serialization goes through a wrap serializer
    inputs = [(model, mode) for model in dict.fromkeys(models)]
    _, top = models_json_schema(inputs, ref_template=_REF, schema_generator=_ProtoJsonSchema)
    schemas: Json = dict(top.get("$defs", {}))
    schemas.update(_error_schemas())
    return schemas


def _error_schemas() -> Json:
    string_map = {"type": "object", "additionalProperties": {"type": "string"}}
    return {
        "Error": {
            "type": "object",
            "required": ["error"],
            "additionalProperties": False,
            "properties": {"error": {"$ref": _REF.format(model="Status")}},
        },
        "Status": {
            "type": "object",
            "required": ["code", "status", "message", "details"],
            "properties": {
                "code": {"type": "integer", "minimum": 400, "maximum": 599, "description": "The HTTP status."},
                "status": {"type": "string", "enum": list(_GRPC_CODES), "description": "The google.rpc.Code name."},
                "message": {"type": "string", "minLength": 1},
                "details": {
                    "type": "array",
                    "minItems": 1,
                    "prefixItems": [{"$ref": _REF.format(model="ErrorInfo")}],
                    "items": {"type": "object", "required": ["@type"], "properties": {"@type": {"type": "string"}}},
                },
            },
        },
        "ErrorInfo": {
            "type": "object",
            "required": ["@type", "reason", "domain"],
            "properties": {
                "@type": {"const": "type.googleapis.com/google.rpc.ErrorInfo"},
                "reason": {"type": "string", "pattern": "^[A-Z][A-Z0-9_]*$"},
                "domain": {"type": "string"},
                "metadata": string_map,
            },
        },
        "BadRequest": {
            "type": "object",
            "required": ["@type", "fieldViolations"],
            "properties": {
                "@type": {"const": "type.googleapis.com/google.rpc.BadRequest"},
                "fieldViolations": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["field", "description"],
                        "properties": {"field": {"type": "string"}, "description": {"type": "string"}},
                    },
                },
            },
        },
    }
