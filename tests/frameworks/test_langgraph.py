"""LangGraph graphs behind the app (``frameworks.langgraph``), on LangChain's fake chat models and
plain nodes: no network, no key. How LangGraph maps to A2A and what only it does; the stories every
adapter tells are in ``test_stories``."""

from __future__ import annotations

import base64
import operator
from typing import Annotated, Any, TypedDict

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph, add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import interrupt

from a2a_serverless.frameworks.langgraph import langgraph_executor

from .conftest import answer_text, tool_statuses


def _one_node(node: Any) -> Any:
    graph = StateGraph(MessagesState)
    graph.add_node("agent", node)
    graph.add_edge(START, "agent")
    graph.add_edge("agent", END)
    return graph.compile()


@tool
def weather(city: str, token: str) -> str:
    """Today's weather in a city."""
    return f"sunny in {city}"


def test_a_subgraph_node_reports_each_tool_call_once_across_turns(serve: Any) -> None:
    # A subgraph as a node: its update is its whole state, earlier turns' tool calls included
    calls = [{"name": "weather", "args": {"city": c, "token": ""}, "id": f"w-{c}"} for c in ("Paris", "Oslo")]
    model = FakeMessagesListChatModel(
        responses=[
            AIMessage("", tool_calls=[calls[0]]),
            AIMessage("Sunny."),
            AIMessage("", tool_calls=[calls[1]]),
            AIMessage("Cold."),
        ]
    )

    async def agent_node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    inner = StateGraph(MessagesState)
    inner.add_node("agent", agent_node)
    inner.add_node("tools", ToolNode([weather]))
    inner.add_edge(START, "agent")
    inner.add_conditional_edges("agent", tools_condition)
    inner.add_edge("tools", "agent")
    agent = serve(langgraph_executor(_one_node(inner.compile())))

    first = agent.send("Paris?", context_id="ctx")
    second = agent.send("Oslo?", context_id="ctx")

    assert tool_statuses(agent.events(first["id"])) == [{"tool": "weather", "toolCallId": "w-Paris"}]
    assert tool_statuses(agent.events(second["id"])) == [{"tool": "weather", "toolCallId": "w-Oslo"}]
    assert answer_text(second) == "Cold."


def test_interrupts_in_a_subgraph_ask_in_turn_and_each_reply_resumes_the_same_run(serve: Any) -> None:
    def ask(state: MessagesState) -> dict[str, Any]:
        where, when = interrupt("Where to?"), interrupt("When?")
        return {"messages": [AIMessage(f"Booked {where} for {when}.")]}

    inner = StateGraph(MessagesState)
    inner.add_node("ask", ask)
    inner.add_edge(START, "ask")
    inner.add_edge("ask", END)
    agent = serve(langgraph_executor(_one_node(inner.compile())))

    asked = agent.send("book a trip")
    again = agent.reply(asked, "Oslo")
    done = agent.reply(asked, "Friday")

    assert [t["status"]["message"]["parts"][0]["text"] for t in (asked, again)] == ["Where to?", "When?"]
    assert again["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert done["id"] == asked["id"]
    assert answer_text(done) == "Booked Oslo for Friday."


def test_an_interrupt_asks_and_the_next_message_resumes_the_same_run(serve: Any) -> None:
    drafted: list[str] = []

    def draft(state: MessagesState) -> dict[str, Any]:
        drafted.append(str(state["messages"][-1].content))
        return {"messages": [AIMessage("Draft: hello world.")]}

    def post(state: MessagesState) -> dict[str, Any]:
        answer = interrupt("Shall I post it?")
        return {"messages": [AIMessage(f" Posted ({answer}).")]}

    graph = StateGraph(MessagesState)
    graph.add_node("draft", draft)
    graph.add_node("post", post)
    graph.add_edge(START, "draft")
    graph.add_edge("draft", "post")
    graph.add_edge("post", END)
    agent = serve(langgraph_executor(graph.compile()))

    asked = agent.send("write a post")
    assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert asked["status"]["message"]["parts"] == [{"text": "Shall I post it?"}]
    done = agent.reply(asked, "yes")

    assert done["id"] == asked["id"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert answer_text(done) == "Draft: hello world. Posted (yes)."
    assert drafted == ["write a post"]  # resumed where it paused: the draft node did not run again


def test_a_structured_interrupt_shows_its_value_and_a_data_reply_resumes_with_it(serve: Any) -> None:
    def review(state: MessagesState) -> dict[str, Any]:
        decision = interrupt({"question": "Send this email?", "action": "send_email", "to": "ops@example.com"})
        return {"messages": [AIMessage(f"approved={decision['approved']}, note={decision['note']}")]}

    agent = serve(langgraph_executor(_one_node(review)))
    asked = agent.send("email ops")
    reply = [{"data": {"approved": True, "note": "ship it"}}]
    done = agent.reply(asked, "", parts=reply)

    assert asked["status"]["message"]["parts"] == [
        {"text": "Send this email?"},
        {"data": {"interrupt": {"question": "Send this email?", "action": "send_email", "to": "ops@example.com"}}},
    ]
    assert answer_text(done) == "approved=True, note=ship it"


def _echo_history(state: MessagesState) -> dict[str, Any]:
    said = [str(m.content) for m in state["messages"] if isinstance(m, HumanMessage)]
    return {"messages": [AIMessage(" | ".join(said))]}


def test_the_graphs_input_and_config_are_the_executors_options(serve: Any) -> None:
    class State(TypedDict):
        question: str
        answer: str

    def reply(state: State, config: RunnableConfig) -> dict[str, Any]:
        return {"answer": f"{config['configurable']['tone']}: {state['question']}"}

    def speak(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage(state["answer"])]}

    class Spoken(State):
        messages: Annotated[list[BaseMessage], add_messages]

    graph = StateGraph(Spoken)
    graph.add_node("reply", reply)
    graph.add_node("speak", speak)
    graph.add_edge(START, "reply")
    graph.add_edge("reply", "speak")
    graph.add_edge("speak", END)
    executor = langgraph_executor(
        graph.compile(),
        input_of=lambda turn: {"question": turn.text.upper()},
        config={"configurable": {"tone": "calm"}, "recursion_limit": 5},
    )

    task = serve(executor).send("why?")

    assert answer_text(task) == "calm: WHY?"


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(24))


def test_image_and_file_blocks_of_an_ai_message_are_an_output_artifact_beside_the_streamed_text(serve: Any) -> None:
    def draw(state: MessagesState) -> dict[str, Any]:
        content: list[str | dict[str, Any]] = [
            {"type": "text", "text": "Here is the chart."},
            {"type": "image", "base64": base64.b64encode(PNG).decode(), "mime_type": "image/png"},
            {"type": "file", "url": "https://files.example/report.pdf", "mime_type": "application/pdf"},
            {
                "type": "file",
                "base64": base64.b64encode(b"a,b\n1,2\n").decode(),
                "mime_type": "text/csv",
                "extras": {"filename": "data.csv"},
            },
            {"type": "image", "file_id": "file-abc"},  # in the provider's own store: not fetched
        ]
        return {"messages": [AIMessage(content=content)]}

    agent = serve(langgraph_executor(_one_node(draw)))
    task = agent.send("chart please")

    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert answer_text(task) == "Here is the chart."
    outputs = [a["parts"] for a in task["artifacts"] if a["name"] == "output"]
    assert outputs == [
        [
            {"raw": base64.b64encode(PNG).decode(), "mediaType": "image/png", "filename": "image.png"},
            {"url": "https://files.example/report.pdf", "mediaType": "application/pdf"},
            {"raw": base64.b64encode(b"a,b\n1,2\n").decode(), "mediaType": "text/csv", "filename": "data.csv"},
        ]
    ]


def test_a_models_image_in_openai_format_becomes_a_file_part(serve: Any) -> None:
    data_url = "data:image/jpeg;base64," + base64.b64encode(b"\xff\xd8\xff jpeg").decode()
    model = FakeMessagesListChatModel(
        responses=[AIMessage(content=[{"type": "image_url", "image_url": {"url": data_url}}])]
    )

    async def agent_node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    task = serve(langgraph_executor(_one_node(agent_node))).send("a photo")

    assert [a["parts"] for a in task["artifacts"]] == [
        [{"raw": base64.b64encode(b"\xff\xd8\xff jpeg").decode(), "mediaType": "image/jpeg", "filename": "image.jpg"}]
    ]


def test_files_and_data_of_the_message_reach_the_graph_as_standard_content_blocks(serve: Any) -> None:
    received: list[Any] = []

    def look(state: MessagesState) -> dict[str, Any]:
        received.append(state["messages"][-1].content)
        return {"messages": [AIMessage("seen")]}

    agent = serve(langgraph_executor(_one_node(look)))
    parts = [
        {"text": "compare these"},
        {"raw": base64.b64encode(PNG).decode(), "mediaType": "image/png", "filename": "a.png"},
        {"url": "https://files.example/b.pdf", "mediaType": "application/pdf"},
        {"raw": base64.b64encode(b"hello").decode(), "mediaType": "text/plain; charset=utf-8"},
        {"raw": base64.b64encode(b"\x00\x01").decode()},
        {"data": {"pages": [1, 2]}},
    ]
    agent.send("", parts=parts)

    assert received == [
        [
            {"type": "text", "text": "compare these"},
            {
                "type": "image",
                "base64": base64.b64encode(PNG).decode(),
                "mime_type": "image/png",
                "extras": {"filename": "a.png"},
            },
            {"type": "file", "url": "https://files.example/b.pdf", "mime_type": "application/pdf"},
            {"type": "text-plain", "base64": base64.b64encode(b"hello").decode(), "mime_type": "text/plain"},
            {"type": "file", "base64": base64.b64encode(b"\x00\x01").decode(), "mime_type": "application/octet-stream"},
            {"type": "text", "text": '{"pages": [1, 2]}'},
        ]
    ]


def test_a_text_message_reaches_the_graph_as_a_string(serve: Any) -> None:
    received: list[Any] = []

    def look(state: MessagesState) -> dict[str, Any]:
        received.append(state["messages"][-1].content)
        return {"messages": [AIMessage("seen")]}

    serve(langgraph_executor(_one_node(look))).send("just text")

    assert received == ["just text"]


def _booking_or_echo() -> Any:
    """Books after asking (a message naming "book"), else answers with every human turn so far."""

    def book(state: MessagesState) -> dict[str, Any]:
        answer = interrupt("Book room 7?")
        return {"messages": [AIMessage(f"Booked ({answer}).")]}

    graph = StateGraph(MessagesState)
    graph.add_node("book", book)
    graph.add_node("echo", _echo_history)
    graph.add_conditional_edges(START, lambda s: "book" if "book" in str(s["messages"][-1].content) else "echo")
    graph.add_edge("book", END)
    graph.add_edge("echo", END)
    return graph.compile()


def test_a_paused_task_resumed_after_another_turn_of_its_context_keeps_both_in_the_memory(serve: Any) -> None:
    agent = serve(langgraph_executor(_booking_or_echo()))
    agent.send("hello", context_id="ctx")
    paused = agent.send("book room 7", context_id="ctx")
    agent.send("meanwhile", context_id="ctx")  # another task of the context, while the first waits
    done = agent.reply(paused, "yes")
    later = agent.send("what happened?", context_id="ctx")

    assert answer_text(done) == "Booked (yes)."
    assert answer_text(later) == "hello | meanwhile | book room 7 | what happened?"


def test_a_resumed_graph_without_a_messages_channel_keeps_its_own_state_as_the_memory(serve: Any) -> None:
    class Log(TypedDict):
        said: Annotated[list[str], operator.add]
        reply: AIMessage

    def step(state: Log) -> dict[str, Any]:
        sure = f": {interrupt('Sure?')}" if state["said"][-1] == "ask" else ""
        return {"reply": AIMessage(" | ".join(state["said"]) + sure)}

    graph = StateGraph(Log)
    graph.add_node("step", step)
    graph.add_edge(START, "step")
    graph.add_edge("step", END)
    agent = serve(langgraph_executor(graph.compile(), input_of=lambda turn: {"said": [turn.text]}))
    agent.send("one", context_id="ctx")
    paused = agent.send("ask", context_id="ctx")
    meanwhile = agent.send("two", context_id="ctx")
    done = agent.reply(paused, "yes")
    later = agent.send("three", context_id="ctx")

    assert (answer_text(meanwhile), answer_text(done)) == ("one | two", "one | ask: yes")
    # the resumed run's state replaced the context's: "two", finished meanwhile, is not in it
    assert answer_text(later) == "one | ask | three"
