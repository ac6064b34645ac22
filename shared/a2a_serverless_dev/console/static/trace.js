// A task's traces as a waterfall (the local stack collects its processes' spans: docs/tracing.md):
// one table per turn, a row per span in tree order, each with its process, duration and a bar placed
// on the turn's time line; its attributes, links and events on demand. DOM nodes only.

import { devApi } from "./a2a.js";
import { el } from "./render.js";

export async function showTrace(taskId, box) {
  box.replaceChildren();
  const answer = await devApi(`/tasks/${encodeURIComponent(taskId)}/trace`);
  if (!answer.enabled) {
    box.append(el("p", { class: "muted", text: "tracing is off (A2A_TRACING=off)" }));
    return;
  }
  if (!answer.traces.length) box.append(el("p", { class: "muted", text: "no trace yet" }));
  answer.traces.forEach((trace, turn) => box.append(waterfall(trace, turn + 1)));
}

function waterfall(trace, turn) {
  const spans = trace.spans;
  const start = Math.min(...spans.map((s) => s.startUnixNano));
  const end = Math.max(...spans.map((s) => s.endUnixNano));
  const total = Math.max(end - start, 1);
  const body = el("tbody", {});
  for (const [span, depth] of treeOrder(spans)) {
    const bar = el("div", { class: "span-bar", "data-status": span.status.code });
    bar.style.marginLeft = `${((span.startUnixNano - start) / total) * 100}%`;
    bar.style.width = `${Math.max(((span.endUnixNano - span.startUnixNano) / total) * 100, 0.5)}%`;
    const name = el("td", { class: "span-name" }, el("details", {},
      el("summary", { text: span.name }),
      el("pre", { text: JSON.stringify({ attributes: span.attributes, links: span.links, events: span.events }, null, 2) })));
    name.style.paddingLeft = `${depth * 1.2}em`;
    body.append(el("tr", { class: "trace-span", "data-name": span.name, "data-status": span.status.code },
      name,
      el("td", { text: span.service }),
      el("td", { class: "span-ms", text: `${ms(span.endUnixNano - span.startUnixNano)} ms` }),
      el("td", { class: "span-time" }, bar)));
  }
  return el("div", { class: "trace", "data-trace-id": trace.traceId },
    el("h4", { text: `Turn ${turn}: trace ${trace.traceId} (${ms(end - start)} ms)` }),
    el("table", { class: "trace-table" },
      el("thead", {}, el("tr", {}, ...["span", "process", "duration", "time line"].map((h) => el("th", { text: h })))),
      body));
}

// Each span after its parent, children in start order; a span whose parent is not in the trace is a root.
function treeOrder(spans) {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map();
  for (const span of spans) {
    const parent = ids.has(span.parentSpanId) ? span.parentSpanId : null;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(span);
  }
  const order = [];
  const visit = (parent, depth) => {
    for (const span of (children.get(parent) || []).sort((a, b) => a.startUnixNano - b.startUnixNano)) {
      order.push([span, depth]);
      visit(span.spanId, depth + 1);
    }
  };
  visit(null, 0);
  return order;
}

function ms(nanos) {
  return (nanos / 1e6).toFixed(1);
}
