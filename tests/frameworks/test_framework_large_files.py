"""A file an agent answers with, larger than ``blob_threshold_bytes``, takes the kit's path for large
parts with no adapter code for it: the worker's commit stores it in the blob bucket and the task
points at it; a client reading the task gets the file back. On the AWS store (DynamoDB and S3 in
moto), for the Pydantic AI, LangGraph, Strands and OpenAI Agents SDK adapters."""

from __future__ import annotations

import base64
import itertools
import os
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from agents import RunConfig
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from pydantic_ai import Agent, BinaryImage
from pydantic_ai.messages import FilePart, ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo
from strands import Agent as StrandsAgent

from a2a_serverless.blobs import REF_SCHEME
from a2a_serverless.execution import AgentExecutor
from a2a_serverless.frameworks.langgraph import langgraph_executor
from a2a_serverless.frameworks.openai_agents import openai_agents_executor
from a2a_serverless.frameworks.pydantic_ai import pydantic_ai_executor
from a2a_serverless.frameworks.strands import strands_executor
from a2a_serverless.ports import Scope
from a2a_serverless_dev.resources import create_resources, load_template
from testkit.aws import REGION, moto_clients

from .conftest import ServedAgent, answer_text
from .openai_agents_model import drawing_agent
from .pydantic_ai_models import WholeResponses
from .strands_scripted import Call, drawing
from .strands_scripted import ScriptedModel as StrandsModel

BIG = os.urandom(100 * 1024)  # above the default threshold, 32 KiB
_prefixes = itertools.count()


@pytest.fixture(scope="module")
def aws() -> Iterator[tuple[Any, Any, Any]]:
    with moto_clients() as (dynamodb, sqs):
        yield dynamodb, sqs, boto3.client("s3", region_name=REGION)


@pytest.fixture
def serve_on_aws(aws: tuple[Any, Any, Any]) -> Iterator[Any]:
    dynamodb, sqs, s3 = aws
    made = create_resources(dynamodb, sqs, s3=s3, prefix=f"files-{next(_prefixes)}", template=load_template())
    bucket = made.buckets["BlobsBucket"]
    served: list[ServedAgent] = []

    def start(executor: AgentExecutor) -> tuple[ServedAgent, str]:
        settings = {"store": "dynamodb", "table_name": made.tables["TasksTable"], "blob_bucket": bucket}
        served.append(ServedAgent(executor, **settings))
        return served[-1], bucket

    yield start
    for agent in served:
        agent.close()


def _pydantic_ai_painter() -> AgentExecutor:
    def paint(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("Painted."), FilePart(BinaryImage(data=BIG, media_type="image/png"))])

    return pydantic_ai_executor(Agent(WholeResponses(paint)))


def _langgraph_painter() -> AgentExecutor:
    def paint(state: MessagesState) -> dict[str, Any]:
        image = {"type": "image", "base64": base64.b64encode(BIG).decode(), "mime_type": "image/png"}
        return {"messages": [AIMessage(content=[{"type": "text", "text": "Painted."}, image])]}

    graph = StateGraph(MessagesState)
    graph.add_node("paint", paint)
    graph.add_edge(START, "paint")
    graph.add_edge("paint", END)
    return langgraph_executor(graph.compile())


def _strands_painter() -> AgentExecutor:
    draw, hand_over = drawing(BIG)  # the turn ends with the tool's image (and a small report)
    model = StrandsModel(Call("draw", {"subject": "something big"}))
    return strands_executor(lambda: StrandsAgent(model=model, tools=[draw], hooks=[hand_over], callback_handler=None))


def _openai_agents_painter() -> AgentExecutor:
    return openai_agents_executor(drawing_agent(BIG), run_config=RunConfig(tracing_disabled=True))


@pytest.mark.parametrize(
    ("make", "answer"),
    [
        pytest.param(_pydantic_ai_painter, "Painted.", id="pydantic-ai"),
        pytest.param(_langgraph_painter, "Painted.", id="langgraph"),
        pytest.param(_strands_painter, "Here is your 2-file chart.", id="strands"),
        pytest.param(_openai_agents_painter, "Here is your cat.", id="openai-agents"),
    ],
)
def test_a_large_file_the_agent_answers_with_is_stored_in_the_bucket_and_read_back(
    serve_on_aws: Any, aws: tuple[Any, Any, Any], make: Any, answer: str
) -> None:
    agent, bucket = serve_on_aws(make())

    task = agent.send("paint something big")

    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert answer_text(task) == answer
    # the task keeps a pointer to the file, and the bucket holds it
    record = agent.runtime.store.get_task(Scope("", "alice"), task["id"])
    assert record is not None
    [stored] = [p for a in record.task.artifacts if a.name == "output" for p in a.parts if p.media_type == "image/png"]
    assert (stored.url or "").startswith(REF_SCHEME), stored
    assert stored.media_type == "image/png"
    s3 = aws[2]
    objects = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]
    bodies = [s3.get_object(Bucket=bucket, Key=key)["Body"].read() for key in objects]
    # Beside it, the conversation's memory when it outgrows an item (Strands' holds the image twice:
    # the tool's result and the final message).
    assert bodies.count(BIG) == 1
    # a client reading the task gets the file itself (inline: within the response's budget)
    [output] = [a["parts"] for a in agent.task(task["id"])["artifacts"] if a["name"] == "output"]
    assert [base64.b64decode(p["raw"]) for p in output if p["mediaType"] == "image/png"] == [BIG]
