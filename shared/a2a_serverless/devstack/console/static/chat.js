// Chat: send a message, watch the reply stream in (SendStreamingMessage), answer when the task asks
// for input, cancel a running task, and resume a dropped stream (SubscribeToTask with Last-Event-ID).

import { INTERRUPTED, TERMINAL, newId, stateOf } from "./a2a.js";
import { el, renderParts } from "./render.js";

const RESUME_ATTEMPTS = 5;

export function setUpChat(agent) {
  const log = document.getElementById("chat-log");
  const input = document.getElementById("chat-input");
  const cancel = document.getElementById("cancel");
  const taskLabel = document.getElementById("chat-task-id");
  const stateLabel = document.getElementById("chat-state");
  const chat = { taskId: null, contextId: null, state: null, lastSeq: null, turn: null };

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

  function handle(event, seq) {
    if (seq !== null && seq !== undefined) chat.lastSeq = seq;
    const turn = chat.turn;
    if (event.task) {
      chat.taskId = event.task.id;
      chat.contextId = event.task.contextId || chat.contextId;
      for (const artifact of event.task.artifacts || []) {
        const box = artifactBox(turn, artifact);
        box.querySelectorAll(".parts").forEach((n) => n.remove());
        box.append(renderParts(artifact.parts));
      }
    } else if (event.statusUpdate) {
      chat.taskId = event.statusUpdate.taskId || chat.taskId;
      chat.contextId = event.statusUpdate.contextId || chat.contextId;
      const message = event.statusUpdate.status && event.statusUpdate.status.message;
      if (message) turn.append(el("div", { class: "status-message" }, renderParts(message.parts)));
    } else if (event.artifactUpdate) {
      const { artifact } = event.artifactUpdate;
      const box = artifactBox(turn, artifact);
      if (!event.artifactUpdate.append) box.querySelectorAll(".parts").forEach((n) => n.remove());
      box.append(renderParts(artifact.parts));
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
  return { reset: () => document.getElementById("new-conversation").click(), current: () => chat.taskId };
}
