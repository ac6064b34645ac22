// Tasks: ListTasks with its filters and paging (refreshed live), and one task's timeline: the local
// stack's raw event log from the dev API, or, for another agent, what GetTask tells.

import { devApi } from "./a2a.js";
import { el } from "./render.js";
import { showTrace } from "./trace.js";

const LIVE_MS = 2000;

export function setUpTasks(agent, visible) {
  const body = document.querySelector("#tasks-table tbody");
  const summary = document.getElementById("tasks-summary");
  const next = document.getElementById("tasks-next");
  const first = document.getElementById("tasks-first");
  const live = document.getElementById("tasks-live");
  const paging = { token: "", next: "" };

  async function list() {
    const params = { pageSize: Number(document.getElementById("filter-size").value) || 20, includeArtifacts: false, historyLength: 0 };
    const context = document.getElementById("filter-context").value.trim();
    const state = document.getElementById("filter-state").value;
    if (context) params.contextId = context;
    if (state) params.status = state;
    if (paging.token) params.pageToken = paging.token;
    try {
      const page = await agent().call("ListTasks", params);
      body.replaceChildren(...(page.tasks || []).map(row));
      paging.next = page.nextPageToken || "";
      summary.textContent = `${page.totalSize ?? "?"} task(s) match; this page shows ${(page.tasks || []).length}.`;
    } catch (error) {
      summary.textContent = `ListTasks failed: ${error.message}`;
      body.replaceChildren();
      paging.next = "";
    }
    next.hidden = !paging.next;
    first.hidden = !paging.token;
  }

  function row(task) {
    const state = (task.status && task.status.state) || "";
    return el("tr", { "data-task-id": task.id },
      el("td", {}, el("code", { text: task.id })),
      el("td", {}, el("code", { text: task.contextId || "" })),
      el("td", { class: "state", "data-state": state, text: state.replace("TASK_STATE_", "") }),
      el("td", { text: (task.status && task.status.timestamp) || "" }),
      el("td", {}, el("button", { type: "button", class: "open-timeline", text: "Timeline", onclick: () => timeline(task.id) })));
  }

  async function timeline(taskId) {
    const box = document.getElementById("timeline");
    const rows = document.querySelector("#timeline-table tbody");
    const push = document.getElementById("timeline-push");
    const source = document.getElementById("timeline-source");
    const trace = document.getElementById("timeline-trace");
    box.hidden = false;
    document.getElementById("timeline-task").textContent = taskId;
    rows.replaceChildren();
    push.replaceChildren();
    trace.replaceChildren();
    try {
      if (agent().remote) {
        source.textContent = "Another agent: its history and artifacts from GetTask (its event log is not public).";
        const task = await agent().call("GetTask", { id: taskId });
        (task.history || []).forEach((m, i) => rows.append(eventRow(i + 1, "", "message", m)));
        (task.artifacts || []).forEach((a, i) => rows.append(eventRow(`artifact ${i + 1}`, "", "artifact", a)));
        rows.append(eventRow("now", task.status && task.status.timestamp, "status", task.status));
        push.append(el("li", { class: "muted", text: "not available for another agent" }));
        trace.append(el("p", { class: "muted", text: "not available for another agent" }));
        return;
      }
      source.textContent = "The task's event log, read through the store by the dev API.";
      const answer = await devApi(`/tasks/${encodeURIComponent(taskId)}/events`);
      for (const e of answer.events) rows.append(eventRow(e.seq, e.time, e.kind, e.event));
      if (!answer.pushConfigs.length) push.append(el("li", { class: "muted", text: "none" }));
      const attempts = answer.pushConfigs.length ? await deliveryAttempts(taskId) : null;
      for (const c of answer.pushConfigs) {
        const mine = attempts ? attempts.attempts.filter((a) => a.configId === c.id) : [];
        const item = el("li", { class: "push-config", "data-config-id": c.id },
          el("span", { class: "push-delivered", text: `${c.id} → ${c.url}: ${delivery(c.deliveredSeq, mine, attempts)}` }));
        if (attempts) item.append(attemptTable(mine, attempts.recorded));
        push.append(item);
      }
      if (attempts && attempts.omitted) push.append(el("li", { class: "muted", text: `${attempts.omitted} older attempt(s) not shown` }));
      if (attempts) {
        for (const d of attempts.deadLetters) {
          push.append(el("li", { class: "dead-letter", text: `dead letter: ${d.configId}, events ${d.fromSeq || "?"}–${d.upToSeq}: ${d.lastError}` }));
        }
      }
      await showTrace(taskId, trace);
    } catch (error) {
      source.textContent = `Timeline failed: ${error.message}`;
    }
    box.scrollIntoView();
  }

  // What a config's webhook got. The cursor (deliveredSeq) passes an event once it was delivered or
  // dead-lettered, so it alone cannot tell which: the attempt log can.
  function delivery(cursor, attempts, log) {
    if (cursor == null) return "its delivery cursor is gone";
    if (!log || !log.recorded || log.omitted) {
      return cursor ? `delivered or dead-lettered up to event ${cursor} (see the dead letters)` : "nothing delivered yet";
    }
    const delivered = new Set(attempts.filter((a) => a.outcome === "delivered").map((a) => a.seq));
    const passed = [...Array(cursor).keys()].map((n) => n + 1).filter((seq) => !delivered.has(seq));
    const said = [delivered.size ? `delivered events ${ranges([...delivered])}` : "nothing delivered yet"];
    if (passed.length) said.push(`dead-lettered events ${ranges(passed)}`);
    const last = attempts[attempts.length - 1];
    if (last && last.outcome === "retrying") said.push(`retrying event ${last.seq} (attempt ${last.attempt} failed)`);
    return said.join("; ");
  }

  function ranges(seqs) {
    const sorted = [...new Set(seqs)].sort((a, b) => a - b);
    const spans = [];
    for (const seq of sorted) {
      const span = spans[spans.length - 1];
      if (span && seq === span[1] + 1) span[1] = seq;
      else spans.push([seq, seq]);
    }
    return spans.map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`)).join(", ");
  }

  function deliveryAttempts(taskId) {
    return devApi(`/tasks/${encodeURIComponent(taskId)}/push-attempts`);
  }

  function attemptTable(attempts, recorded) {
    if (!recorded) return el("p", { class: "muted", text: "delivery attempts are recorded by the local stack only (A2A_PUSH_ATTEMPT_LOG)" });
    if (!attempts.length) return el("p", { class: "muted", text: "no delivery attempt yet" });
    const body = el("tbody", {});
    for (const a of attempts) {
      body.append(el("tr", { class: "push-attempt", "data-outcome": a.outcome },
        el("td", { text: a.time || "" }), el("td", { text: String(a.seq) }), el("td", { text: String(a.attempt) }),
        el("td", { text: a.status == null ? a.error : (a.error || `HTTP ${a.status}`) }),
        el("td", { text: `${a.latencyMs} ms` }), el("td", { text: a.outcome })));
    }
    return el("table", { class: "push-attempts" },
      el("thead", {}, el("tr", {}, ...["time", "event", "attempt", "status", "latency", "outcome"].map((h) => el("th", { text: h })))),
      body);
  }

  function eventRow(seq, time, kind, event) {
    return el("tr", { class: "event", "data-kind": kind },
      el("td", { text: String(seq) }), el("td", { text: time || "" }), el("td", { text: kind }),
      el("td", {}, el("details", {}, el("summary", { text: summarize(kind, event) }), el("pre", { text: JSON.stringify(event, null, 2) }))));
  }

  function summarize(kind, event) {
    const inner = event[kind] || event;
    if (inner.status && inner.status.state) return inner.status.state;
    if (inner.state) return inner.state;
    if (inner.artifact) return `artifact ${inner.artifact.name || inner.artifact.artifactId}`;
    if (inner.role) return inner.role;
    return kind;
  }

  document.getElementById("tasks-form").addEventListener("submit", (event) => {
    event.preventDefault();
    paging.token = "";
    list();
  });
  next.addEventListener("click", () => { paging.token = paging.next; list(); });
  first.addEventListener("click", () => { paging.token = ""; list(); });
  setInterval(() => { if (live.checked && visible()) list(); }, LIVE_MS);
  return { list, timeline };
}
