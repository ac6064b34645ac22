// Chat: send a message, watch the reply stream in (SendStreamingMessage), answer when the task asks
// for input, cancel a running task, and resume a dropped stream (SubscribeToTask with Last-Event-ID).

import { INTERRUPTED, TERMINAL, newId, stateOf } from "./a2a.js";
import { el, renderPart, renderParts } from "./render.js";

const RESUME_ATTEMPTS = 5;
const DEMO_PLACEHOLDER = "Say something (the demo agent knows: hello, ask me, sleep 20)";

// What the input suggests: the demo agent's commands when it is the demo (execution/demo.py: its
// skills "echo" and "ask"), else the examples the agent's card gives, if any.
function placeholderFor(card) {
  const skills = (card && card.skills) || [];
  const ids = new Set(skills.map((skill) => skill.id));
  if (ids.has("echo") && ids.has("ask")) return DEMO_PLACEHOLDER;
  const examples = skills.flatMap((skill) => skill.examples || []).slice(0, 3);
  return examples.length ? `Say something (examples from its card: ${examples.join(", ")})` : "Say something";
}

// An answer streamed in chunks of one artifact (the A2A specification's TaskArtifactUpdateEvent:
// append: true and the same artifactId, lastChunk on the last) reads as one growing text, as in any
// chat: an artifact's adjacent text parts of one media type are shown joined, live or in a task.
// The stream carries each chunk as it came, so the live view needs this; a task the server reads
// already holds its appended text joined (docs/executors.md, "Streaming an answer"), where this
// changes nothing.
function joinTexts(parts) {
  const joined = [];
  for (const part of parts || []) {
    const last = joined[joined.length - 1];
    const sameKind = last && last.text !== undefined && (last.mediaType || "") === (part.mediaType || "");
    if (part.text !== undefined && sameKind) joined[joined.length - 1] = { ...last, text: last.text + part.text };
    else joined.push(part);
  }
  return joined;
}

export function setUpChat(agent) {
  const log = document.getElementById("chat-log");
  const input = document.getElementById("chat-input");
  const cancel = document.getElementById("cancel");
  const taskLabel = document.getElementById("chat-task-id");
  const stateLabel = document.getElementById("chat-state");
  const chat = { taskId: null, contextId: null, state: null, lastSeq: null, turn: null };
  const shown = new WeakMap(); // artifact box -> its parts as shown (joined)

  function showState() {
    taskLabel.textContent = chat.taskId || "none yet";
    stateLabel.textContent = chat.state ? chat.state.replace("TASK_STATE_", "") : "";
    stateLabel.dataset.state = chat.state || "";
    cancel.hidden = !chat.taskId || !chat.state || TERMINAL.has(chat.state);
  }

  function bubble(role, text) {
    const node = el("div", { class: `bubble ${role}` }, el("div", { class: "who", text: role === "user" ? "You" : "Agent" }));
    if (text !== undefined) node.append(el("div", { class: "part text", text }));
    log.append(node);
    log.scrollTop = log.scrollHeight;
    return node;
  }

  function artifactBox(turn, artifact) {
    let box = turn.querySelector(`[data-artifact-id="${CSS.escape(artifact.artifactId)}"]`);
    if (!box) {
      box = el("div", { class: "artifact", "data-artifact-id": artifact.artifactId, "data-name": artifact.name || "" },
        el("div", { class: "artifact-name", text: artifact.name || artifact.artifactId }));
      turn.append(box);
    }
    return box;
  }

  // An artifact's parts in its box: all of them, or (append) the next chunk's after those shown.
  // Only what changed is rendered again: the last part shown, when a chunk's text joins it.
  function showParts(box, parts, append) {
    let list = box.querySelector(":scope > .parts");
    if (!append || !list) {
      if (list) list.remove();
      list = el("div", { class: "parts" });
      box.append(list);
      shown.set(box, []);
    }
    const before = shown.get(box);
    const joined = joinTexts([...before, ...parts]);
    let from = before.length;
    if (from && joined[from - 1] !== before[from - 1]) from -= 1;
    while (list.children.length > from) list.lastElementChild.remove();
    for (const part of joined.slice(from)) list.append(renderPart(part));
    shown.set(box, joined);
  }

  function handle(event, seq) {
    if (seq !== null && seq !== undefined) chat.lastSeq = seq;
    const turn = chat.turn;
    if (event.task) {
      chat.taskId = event.task.id;
      chat.contextId = event.task.contextId || chat.contextId;
      for (const artifact of event.task.artifacts || []) showParts(artifactBox(turn, artifact), artifact.parts, false);
    } else if (event.statusUpdate) {
      chat.taskId = event.statusUpdate.taskId || chat.taskId;
      chat.contextId = event.statusUpdate.contextId || chat.contextId;
      const message = event.statusUpdate.status && event.statusUpdate.status.message;
      if (message) turn.append(el("div", { class: "status-message" }, renderParts(message.parts)));
    } else if (event.artifactUpdate) {
      const { artifact, append } = event.artifactUpdate;
      showParts(artifactBox(turn, artifact), artifact.parts, Boolean(append));
    } else if (event.message) {
      chat.contextId = event.message.contextId || chat.contextId;
      turn.append(el("div", { class: "status-message" }, renderParts(event.message.parts)));
    }
    const state = stateOf(event);
    if (state) {
      chat.state = state;
      turn.dataset.state = state;
    }
    showState();
    log.scrollTop = log.scrollHeight;
  }

  const settled = () => !chat.taskId || TERMINAL.has(chat.state) || INTERRUPTED.has(chat.state);

  // The stream ended (or broke) before the task settled: subscribe again from the last event seen.
  async function resume() {
    for (let attempt = 1; attempt <= RESUME_ATTEMPTS && !settled(); attempt++) {
      const note = el("div", { class: "muted resume", text: `stream dropped: resuming after event ${chat.lastSeq ?? 0} (Last-Event-ID)` });
      chat.turn.append(note);
      const controller = new AbortController();
      try {
        await agent().stream("SubscribeToTask", { id: chat.taskId }, (event, seq) => {
          handle(event, seq);
          if (settled()) controller.abort();
        }, { signal: controller.signal, lastEventId: chat.lastSeq ?? 0 });
      } catch (error) {
        if (error.name !== "AbortError" && attempt === RESUME_ATTEMPTS) throw error;
      }
    }
  }

  async function send(text) {
    const message = { messageId: newId(), role: "ROLE_USER", parts: [{ text }] };
    if (chat.contextId) message.contextId = chat.contextId;
    if (chat.taskId && INTERRUPTED.has(chat.state)) message.taskId = chat.taskId;
    else if (chat.taskId && !settled()) {
      bubble("agent", "The current task is still running: wait, or cancel it first.").classList.add("error");
      return;
    } else {
      chat.taskId = null;
      chat.state = null;
    }
    chat.lastSeq = null;
    bubble("user", text);
    chat.turn = bubble("agent");
    chat.turn.classList.add("streaming");
    try {
      try {
        await agent().stream("SendStreamingMessage", { message }, handle);
      } catch (error) {
        if (!(error instanceof TypeError) || !chat.taskId) throw error; // a network error: resume below
      }
      await resume();
    } catch (error) {
      chat.turn.append(el("div", { class: "error", text: String(error.message || error) }));
    } finally {
      chat.turn.classList.remove("streaming");
      showState();
    }
  }

  document.getElementById("chat-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    input.value = "";
    send(text);
  });

  cancel.addEventListener("click", async () => {
    try {
      const task = await agent().call("CancelTask", { id: chat.taskId });
      if (task && task.status) {
        chat.state = task.status.state;
        showState();
      }
    } catch (error) {
      bubble("agent", `Cancel failed: ${error.message}`).classList.add("error");
    }
  });

  document.getElementById("new-conversation").addEventListener("click", () => {
    Object.assign(chat, { taskId: null, contextId: null, state: null, lastSeq: null, turn: null });
    log.replaceChildren();
    showState();
  });

  showState();
  // reset(card): a new conversation with the agent of that card.
  function reset(card) {
    input.placeholder = placeholderFor(card);
    document.getElementById("new-conversation").click();
  }

  return { reset, current: () => chat.taskId };
}
