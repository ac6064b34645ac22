// An A2A client for the console: JSON-RPC over fetch, Server-Sent Events read from the response body
// (EventSource cannot POST), v1.0 on the wire, or v0.3 translated to and from the v1.0 shapes so the
// rest of the page sees one vocabulary. The local agent is called directly (same origin); another
// agent through the dev API's proxy (/_console/api/proxy), so the page needs no CORS from it.

export const TERMINAL = new Set(["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"]);
export const INTERRUPTED = new Set(["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"]);
export const API = "/_console/api";
export const CONSOLE_HEADERS = { "X-A2A-Console": "1" };

// A call of the console's dev API, with its header (and a JSON body, when given): the answer's JSON,
// or an Error with the API's own message.
export async function devApi(path, { method = "GET", body } = {}) {
  const headers = { ...CONSOLE_HEADERS };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(`${API}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!response.ok) {
    const answer = await response.json().catch(() => ({}));
    throw new Error(answer.error || `HTTP ${response.status}`);
  }
  return response.json();
}

const V03_METHODS = {
  SendMessage: "message/send",
  SendStreamingMessage: "message/stream",
  GetTask: "tasks/get",
  CancelTask: "tasks/cancel",
  SubscribeToTask: "tasks/resubscribe",
  ListTaskPushNotificationConfigs: "tasks/pushNotificationConfig/list",
};

export class A2AError extends Error {
  constructor(error) {
    super(`${error.message || "error"}${error.code !== undefined ? ` (${error.code})` : ""}`);
    this.error = error;
  }
}

export function newId() {
  return crypto.randomUUID();
}

export class Agent {
  // base: "" for the agent serving this page, else another agent's base URL; version: "1.0" or "0.3".
  constructor(base = "", version = "1.0", rpcUrl = null) {
    this.base = base.replace(/\/+$/, "");
    this.version = version;
    this.rpcUrl = rpcUrl || `${this.base}/`;
    this.ids = 0;
  }

  get remote() {
    return this.base !== "";
  }

  // Same origin: fetched directly. Any other origin: through the proxy, with the absolute URL.
  fetch(url, init = {}) {
    const headers = new Headers(init.headers || {});
    const absolute = new URL(url, location.href);
    if (absolute.origin === location.origin) return fetch(absolute.pathname + absolute.search, { ...init, headers });
    headers.set("X-A2A-Target", absolute.href);
    for (const [k, v] of Object.entries(CONSOLE_HEADERS)) headers.set(k, v);
    return fetch(`${API}/proxy`, { ...init, headers });
  }

  async card() {
    const response = await this.fetch(`${this.base}/.well-known/agent-card.json`, { headers: { Accept: "application/json" } });
    if (!response.ok) throw new Error(`the agent card answered HTTP ${response.status}`);
    return response.json();
  }

  request(method, params, accept) {
    const v03 = this.version === "0.3";
    if (v03 && !(method in V03_METHODS)) throw new Error(`${method} does not exist in A2A 0.3`);
    const body = { jsonrpc: "2.0", id: ++this.ids, method: v03 ? V03_METHODS[method] : method, params: v03 ? paramsTo03(params) : params };
    const headers = { "Content-Type": "application/json", Accept: accept };
    if (!v03) headers["A2A-Version"] = "1.0";
    return { body: JSON.stringify(body), headers };
  }

  async call(method, params) {
    const { body, headers } = this.request(method, params, "application/json");
    const response = await this.fetch(this.rpcUrl, { method: "POST", body, headers });
    const answer = await response.json();
    if (answer.error) throw new A2AError(answer.error);
    if (this.version !== "0.3") return answer.result;
    const result = resultFrom03(answer.result);
    return method === "GetTask" || method === "CancelTask" ? result.task : result;
  }

  // Streams a method's events: onEvent(streamResponse, seq) for each; resolves when the stream ends.
  async stream(method, params, onEvent, { signal, lastEventId } = {}) {
    const { body, headers } = this.request(method, params, "text/event-stream");
    if (lastEventId !== undefined && lastEventId !== null) headers["Last-Event-ID"] = String(lastEventId);
    const response = await this.fetch(this.rpcUrl, { method: "POST", body, headers, signal });
    const type = response.headers.get("content-type") || "";
    if (!type.startsWith("text/event-stream")) {
      const answer = await response.json();
      if (answer.error) throw new A2AError(answer.error);
      onEvent(this.version === "0.3" ? resultFrom03(answer.result) : answer.result, null);
      return;
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value.replace(/\r\n/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = parseSse(block);
        if (event.data === "") continue;
        const answer = JSON.parse(event.data);
        if (answer.error) throw new A2AError(answer.error);
        const seq = event.id === null ? null : Number(event.id);
        onEvent(this.version === "0.3" ? resultFrom03(answer.result) : answer.result, seq);
      }
    }
  }
}

function parseSse(block) {
  const event = { id: null, event: "message", data: "" };
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") event.id = value;
    else if (field === "event") event.event = value;
    else if (field === "data") data.push(value);
  }
  event.data = data.join("\n");
  return event;
}

// A stream's events reduced to the task's state: the task id, its state and its artifacts.
export function stateOf(event) {
  if (event.task) return event.task.status && event.task.status.state;
  if (event.statusUpdate) return event.statusUpdate.status && event.statusUpdate.status.state;
  return null;
}

// ---- v0.3 <-> v1.0 ----

function partTo03(part) {
  if (part.text !== undefined) return { kind: "text", text: part.text };
  if (part.data !== undefined) return { kind: "data", data: part.data };
  const file = { mimeType: part.mediaType, name: part.filename };
  if (part.raw !== undefined) file.bytes = part.raw;
  else file.uri = part.url;
  return { kind: "file", file };
}

function paramsTo03(params) {
  if (!params.message) return params;
  const m = params.message;
  const message = { kind: "message", messageId: m.messageId, role: m.role === "ROLE_AGENT" ? "agent" : "user", parts: m.parts.map(partTo03) };
  if (m.taskId) message.taskId = m.taskId;
  if (m.contextId) message.contextId = m.contextId;
  return { ...params, message };
}

function partFrom03(part) {
  if (part.kind === "text") return { text: part.text };
  if (part.kind === "data") return { data: part.data };
  const file = part.file || {};
  const out = { mediaType: file.mimeType || "", filename: file.name || "" };
  if (file.bytes !== undefined) out.raw = file.bytes;
  else out.url = file.uri;
  return out;
}

function stateFrom03(state) {
  return `TASK_STATE_${String(state || "unknown").toUpperCase().replace(/-/g, "_")}`;
}

function statusFrom03(status) {
  const out = { ...status, state: stateFrom03(status && status.state) };
  if (status && status.message) out.message = messageFrom03(status.message);
  return out;
}

function messageFrom03(m) {
  return { ...m, role: m.role === "agent" ? "ROLE_AGENT" : "ROLE_USER", parts: (m.parts || []).map(partFrom03) };
}

function artifactFrom03(a) {
  return { ...a, parts: (a.parts || []).map(partFrom03) };
}

export function resultFrom03(result) {
  if (!result || typeof result !== "object") return result;
  switch (result.kind) {
    case "task":
      return {
        task: {
          ...result,
          status: statusFrom03(result.status),
          history: (result.history || []).map(messageFrom03),
          artifacts: (result.artifacts || []).map(artifactFrom03),
        },
      };
    case "status-update":
      return { statusUpdate: { ...result, status: statusFrom03(result.status) } };
    case "artifact-update":
      return { artifactUpdate: { ...result, artifact: artifactFrom03(result.artifact) } };
    case "message":
      return { message: messageFrom03(result) };
    default:
      return result;
  }
}
