"""Pydantic AI agents behind the app (``frameworks.pydantic_ai``), on Pydantic AI's own test models
(``FunctionModel`` streams what each test scripts: text deltas, tool calls): no network, no key.
How Pydantic AI maps to A2A and what only it does; the stories every adapter tells are in
``test_stories``."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai import (
    Agent,
    BinaryContent,
    BinaryImage,
    CallDeferred,
    DeferredToolRequests,
    RunContext,
    ToolReturn,
)
from pydantic_ai.messages import (
    FilePart,
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from a2a_serverless.frameworks.pydantic_ai import pydantic_ai_executor

from .conftest import answer_text
from .pydantic_ai_models import WholeResponses

Stream = AsyncIterator[str | DeltaToolCalls]


def _returned(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]


def test_a_question_tool_asks_its_question_and_the_reply_is_its_answer(serve: Any) -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Stream:
        if returned := _returned(messages):
            yield f"Hello, {returned[0].content}!"
            return
        yield {0: DeltaToolCall(name="ask_user", json_args='{"question": "What is your name?"}', tool_call_id="q1")}

    model_agent = Agent(FunctionModel(stream_function=stream), output_type=[str, DeferredToolRequests])

    @model_agent.tool_plain
    def ask_user(question: str) -> str:
        raise CallDeferred(kind="question")

    agent = serve(pydantic_ai_executor(model_agent))
    asked = agent.send("greet me")
    assert asked["status"]["message"]["parts"] == [
        {"text": "What is your name?"},
        {"data": {"tools": [{"tool": "ask_user", "toolCallId": "q1"}]}},  # the arguments only with tool_details
    ]
    done = agent.reply(asked, "Ada")

    assert answer_text(done) == "Hello, Ada!"


def test_an_approval_tool_works_on_an_agent_whose_output_type_does_not_list_deferred_requests(serve: Any) -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Stream:
        if returned := _returned(messages):
            yield f"Done: {returned[0].content}."
            return
        yield {0: DeltaToolCall(name="delete", json_args="{}", tool_call_id="d1")}

    plain = Agent(FunctionModel(stream_function=stream))  # output_type: str alone

    @plain.tool_plain(requires_approval=True)
    def delete() -> str:
        return "deleted"

    agent = serve(pydantic_ai_executor(plain))
    asked = agent.send("delete it")
    done = agent.reply(asked, "ok")

    assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert answer_text(done) == "Done: deleted."


def test_files_and_data_in_the_message_reach_the_model_as_binary_content_and_json(serve: Any) -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Stream:
        prompt = next(p for p in messages[-1].parts if isinstance(p, UserPromptPart))
        files = [c for c in prompt.content if isinstance(c, BinaryContent)]
        texts = [c for c in prompt.content if isinstance(c, str)]
        yield f"{texts}; {len(files)} file: {files[0].media_type}, {len(files[0].data)} bytes"

    agent = serve(pydantic_ai_executor(Agent(FunctionModel(stream_function=stream))))
    raw = base64.b64encode(b"%PDF-1.7 hello").decode()
    parts = [{"text": "summarize"}, {"raw": raw, "mediaType": "application/pdf"}, {"data": {"pages": [1, 2]}}]
    task = agent.send("", parts=parts)

    assert answer_text(task) == """['summarize', '{"pages": [1, 2]}']; 1 file: application/pdf, 14 bytes"""


def test_the_runs_deps_are_made_from_its_request_context(serve: Any) -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Stream:
        if returned := _returned(messages):
            yield str(returned[0].content)
            return
        yield {0: DeltaToolCall(name="whoami", json_args="{}", tool_call_id="u1")}

    model_agent: Agent[str, str] = Agent(FunctionModel(stream_function=stream), deps_type=str)

    @model_agent.tool
    def whoami(ctx: RunContext[str]) -> str:
        return f"you are {ctx.deps}"

    agent = serve(pydantic_ai_executor(model_agent, deps=lambda context: context.caller))

    assert answer_text(agent.send("who am I?", as_="bob")) == "you are bob"


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(24))
PDF = b"%PDF-1.7 report"


def _file(data: bytes, media_type: str, extension: str) -> dict[str, str]:
    """The file part of ``data`` as the task shows it: named by Pydantic AI's identifier of it."""
    name = hashlib.sha1(data, usedforsecurity=False).hexdigest()[:6] + extension
    return {"raw": base64.b64encode(data).decode(), "mediaType": media_type, "filename": name}


def _outputs(task: dict[str, Any]) -> list[Any]:
    return [a["parts"] for a in task.get("artifacts", []) if a["name"] == "output"]


def test_a_file_the_model_answers_with_is_an_output_artifact_beside_the_streamed_text(serve: Any) -> None:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(
            parts=[TextPart("Here is the chart."), FilePart(BinaryImage(data=PNG, media_type="image/png"))]
        )

    agent = serve(pydantic_ai_executor(Agent(WholeResponses(answer))))
    task = agent.send("chart please")

    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert answer_text(task) == "Here is the chart."
    assert _outputs(task) == [[_file(PNG, "image/png", ".png")]]


def test_an_image_output_type_is_one_file_artifact(serve: Any) -> None:
    def draw(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[FilePart(BinaryImage(data=PNG, media_type="image/png"))])

    agent = serve(pydantic_ai_executor(Agent(WholeResponses(draw), output_type=BinaryImage)))
    task = agent.send("draw a cat")

    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert _outputs(task) == [[_file(PNG, "image/png", ".png")]]  # the output is the model's file: once


def _reporting_agent() -> Agent[None, str]:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if _returned(messages):
            return ModelResponse(parts=[TextPart("Both attached.")])
        return ModelResponse(parts=[ToolCallPart("chart", {}, "c1"), ToolCallPart("report", {}, "r1")])

    agent = Agent(WholeResponses(answer))

    @agent.tool_plain
    def chart() -> BinaryImage:
        return BinaryImage(data=PNG, media_type="image/png")

    @agent.tool_plain
    def report() -> ToolReturn:
        return ToolReturn(return_value="the report", content=[BinaryContent(data=PDF, media_type="application/pdf")])

    return agent


def test_files_tools_return_are_output_artifacts_only_when_opted_in(serve: Any) -> None:
    agent = serve(pydantic_ai_executor(_reporting_agent()))
    opted_in = serve(pydantic_ai_executor(_reporting_agent(), tool_files=True))

    plain = agent.send("chart and report")
    shown = opted_in.send("chart and report")

    assert answer_text(plain) == answer_text(shown) == "Both attached."
    assert _outputs(plain) == []
    assert sorted(_outputs(shown), key=str) == sorted(
        [[_file(PNG, "image/png", ".png")], [_file(PDF, "application/pdf", ".pdf")]], key=str
    )
