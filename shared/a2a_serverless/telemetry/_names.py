"""Span and attribute names: OpenTelemetry's where its conventions have one, ours under one prefix.

- A2A (OpenTelemetry semantic conventions for the Agent2Agent protocol, ``docs/gen-ai/a2a.md`` of
  open-telemetry/semantic-conventions-genai, status Development): the server span is named after
  ``a2a.method.name``, kind SERVER; the A2A ``contextId`` is ``gen_ai.conversation.id``.
- GenAI agent spans: the executor's run is ``invoke_agent {gen_ai.agent.name}``.
- Messaging (``messaging.operation.type``), HTTP client (``http.*``, ``server.*``), ``error.type``.
- Ours: :data:`PREFIX` ``a2a_serverless.`` (docs/tracing.md lists them).
"""

from __future__ import annotations

__all__: list[str] = []  # constants only, read by the package's own modules

PREFIX = "a2a_serverless."

A2A_METHOD = "a2a.method.name"
A2A_PROTOCOL_VERSION = "a2a.protocol.version"
A2A_TENANT = "a2a.tenant"
A2A_TASK_ID = "a2a.task.id"
A2A_TASK_STATE = "a2a.task.state"
A2A_MESSAGE_ID = "a2a.message.id"
A2A_REFERENCE_TASK_IDS = "a2a.message.reference_task_ids"
CONVERSATION_ID = "gen_ai.conversation.id"
GEN_AI_OPERATION = "gen_ai.operation.name"
GEN_AI_AGENT_NAME = "gen_ai.agent.name"
GEN_AI_INPUT = "gen_ai.input.messages"
ERROR_TYPE = "error.type"
MESSAGING_OPERATION = "messaging.operation.type"
HTTP_METHOD = "http.request.method"
HTTP_STATUS = "http.response.status_code"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"

ERROR_REASON = PREFIX + "error.reason"
WORK_RECEIVE_COUNT = PREFIX + "work.receive_count"
WORK_TURN = PREFIX + "work.turn"
RUN_OUTCOME = PREFIX + "run.outcome"
COMMIT_EVENTS = PREFIX + "commit.events"
COMMIT_BYTES = PREFIX + "commit.bytes"
COMMIT_LAST_SEQ = PREFIX + "commit.last_seq"
STREAM_RECORDS = PREFIX + "stream.records"
PUSH_CONFIG_ID = PREFIX + "push.config_id"
PUSH_UP_TO_SEQ = PREFIX + "push.up_to_seq"
PUSH_ITEMS = PREFIX + "push.items"
PUSH_SEQ = PREFIX + "push.seq"
PUSH_ATTEMPT = PREFIX + "push.attempt"
PUSH_OUTCOME = PREFIX + "push.outcome"
PUSH_DELIVERED = PREFIX + "push.delivered"

SPAN_ENQUEUE = "send work"
SPAN_RUN = "process work"
SPAN_COMMIT = "commit events"
SPAN_DISPATCH = "dispatch push"
SPAN_DELIVER = "deliver push"
SPAN_POST = "POST"
INVOKE_AGENT = "invoke_agent"
