#!/usr/bin/env node
/**
 * The official JavaScript A2A client (@a2a-js/sdk) against an A2A agent: the interop scenarios of
 * driver_v03.py / driver_v1.py, same names, one JSON document out.
 *
 * Run by tests/e2e/test_interop_matrix.py with node >= 20; the SDK is installed, pinned by
 * js/package-lock.json, into js/node_modules by `make a2a-js` (npm ci):
 *
 *     node tests/e2e/interop/driver_js.mjs --base-url http://127.0.0.1:PORT \
 *         --binding JSONRPC|HTTP+JSON --protocol 1.0|0.3 --webhook http://127.0.0.1:HOOKPORT/path
 *
 * --protocol 1.0: the card from DefaultAgentCardResolver, a Client from
 *   ClientFactory({transports: [JsonRpcTransportFactory, RestTransportFactory],
 *   preferredTransports: [binding]}).createFromAgentCard(card). The card lists 1.0 and 0.3
 *   interfaces per binding; the factory picks the 1.0 one (JsonRpcTransport / RestTransport) and
 *   the client sends `A2A-Version: 1.0`.
 * --protocol 0.3: the SDK's v0.3 compatibility layer. The factory prefers 1.0 whenever a card lists
 *   it, so the client is made from the card as a 0.3-only agent would serve it: the served card
 *   without its v1.0 `supportedInterfaces`, which the SDK's own v0.3 card translation
 *   (compat/v0_3/client: isLegacyAgentCard, parseLegacyAgentCard) turns into 0.3 interfaces, and
 *   transport factories built with `legacyCompat: {enabled: true}`, which then create
 *   LegacyJsonRpcTransport (v0.3 method names on POST /) or LegacyRestTransport (/v1/... paths).
 *   That client sends `A2A-Version: 0.3`.
 *
 * Each scenario checks outcomes (states, artifact texts, ids, what a later read sees), the typed
 * errors the client raises (TaskNotFoundError, TaskNotCancelableError: `instanceof` the SDK's
 * classes; the class the client threw is recorded), and which binding carried it: a fetch wrapper
 * records every request, and a scenario fails if one left the binding and version it was made for:
 * an `A2A-Version` other than the client's (1.0, or 0.3: the compat client sends `A2A-Version: 0.3`),
 * for JSON-RPC anything but POST / or a method name of the other generation (0.3's have a slash:
 * message/send), for HTTP+JSON a path of the other generation (0.3's are under /v1/).
 *
 * Output (stdout): {"client", "binding", "protocol", "transport", "scenarios": [{name, ok, via,
 * detail, seconds}], "tasks": {scenario: task as v1.0 proto-JSON}, "requests": [...]}; ok is null
 * where the operation does not exist in the protocol version (ListTasks in 0.3). With --read ID
 * (repeatable), --answer ID=TEXT and --create TEXT it only reads, continues or creates those tasks
 * (the cross-version checks) and prints {"read": {id: task}, "answered": {id: task}, "created":
 * task, "binding_violations": [...], "requests": [...]}. If the driver cannot start or a cross
 * step fails: {"fatal": "..."} and exit code 2.
 */

import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const SCENARIO_SECONDS = 45;
const SDK_DIR = new URL("./js/node_modules/@a2a-js/sdk/", import.meta.url);
const CARD_PATH = "/.well-known/agent-card.json";

/** One entry point of the installed SDK, through its package.json `exports` map (ESM build). */
async function sdkImport(subpath, manifest) {
  const target = manifest.exports[subpath]?.import;
  if (!target) throw new Error(`@a2a-js/sdk has no export ${subpath}`);
  return import(new URL(target, SDK_DIR).href);
}

let manifest;
try {
  manifest = JSON.parse(readFileSync(new URL("package.json", SDK_DIR), "utf8"));
} catch (error) {
  console.log(JSON.stringify({ fatal: `@a2a-js/sdk is not installed in ${SDK_DIR.pathname}: run \`make a2a-js\` (${error.message})` }));
  process.exit(2);
}
const core = await sdkImport(".", manifest);
const clientLib = await sdkImport("./client", manifest);
const errors = await sdkImport("./errors", manifest);
const compat = await sdkImport("./compat/v0_3/client", manifest);
const { Role, TaskState } = core;
const { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory } = clientLib;
const { A2AError, TaskNotFoundError, TaskNotCancelableError } = errors;

const COMPLETED = TaskState.TASK_STATE_COMPLETED;
const CANCELED = TaskState.TASK_STATE_CANCELED;
const TERMINAL = new Set([COMPLETED, CANCELED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_REJECTED]);
const RUNNING = new Set([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]);

class CheckFailed extends Error {
  name = "CheckFailed";
}

function expect(condition, message) {
  if (!condition) throw new CheckFailed(message);
}

const show = (value) => JSON.stringify(value);
const stateName = (state) => TaskState[state] ?? String(state);
const texts = (parts) => (parts ?? []).filter((p) => p.content?.$case === "text").map((p) => p.content.value);
const artifactTexts = (task) => (task.artifacts ?? []).flatMap((a) => texts(a.parts));
const errorClass = (error) => error?.constructor?.name ?? typeof error;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The client's request objects are ts-proto messages: built with the SDK's fromJSON (proto-JSON in),
 * so every field has its default, as a TypeScript caller's complete object would. */
const request = (type, json) => core[type].fromJSON(json);

function userMessage(text, fields = {}) {
  return { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text }], ...fields };
}

/** Runs `call`, which must throw an instance of `errorType`; the class the client threw. */
async function refusedWith(errorType, call, what) {
  let result;
  try {
    result = await call();
  } catch (error) {
    expect(
      error instanceof errorType,
      `${what}: the client threw ${errorClass(error)} (${error?.message}), not a ${errorType.name}`,
    );
    return errorClass(error);
  }
  throw new CheckFailed(`${what} succeeded: ${show(result)}`);
}

class Driver {
  constructor(baseUrl, binding, protocol, webhook) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.binding = binding;
    this.protocol = protocol;
    this.webhook = webhook;
    this.requests = [];
    this.tasks = {};
    this.scenarios = [];
    this.extraConfig = "";
    this.fetch = this.recordingFetch.bind(this);
  }

  // -- plumbing -----------------------------------------------------------------------------------

  async recordingFetch(input, init) {
    const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
    const method = (init?.method ?? (typeof input === "object" && "method" in input ? input.method : "GET")).toUpperCase();
    const entry = { method, path: url.pathname, "a2a-version": new Headers(init?.headers).get("a2a-version") };
    if (method === "POST" && url.pathname === "/") {
      try {
        entry.rpc = JSON.parse(init.body).method ?? null;
      } catch {
        entry.rpc = null;
      }
    }
    this.requests.push(entry);
    return fetch(input, init);
  }

  async connect() {
    const legacy = this.protocol === "0.3";
    const options = { fetchImpl: this.fetch, ...(legacy ? { legacyCompat: { enabled: true } } : {}) };
    this.resolver = new DefaultAgentCardResolver(options);
    this.served = await this.resolver.resolve(this.baseUrl);
    if (legacy) {
      // The card as a 0.3-only agent serves it: no v1.0 supportedInterfaces.
      const response = await this.fetch(`${this.baseUrl}${CARD_PATH}`);
      const raw = await response.json();
      delete raw.supportedInterfaces;
      this.legacyCardDetected = compat.isLegacyAgentCard(raw);
      this.card = compat.parseLegacyAgentCard(raw);
    } else {
      this.card = this.served;
    }
    this.factory = new ClientFactory({
      transports: [new JsonRpcTransportFactory(options), new RestTransportFactory(options)],
      preferredTransports: [this.binding],
    });
    this.client = await this.factory.createFromAgentCard(this.card);
    this.transport = this.client.transport.constructor.name.replace(/^_+/, ""); // esbuild names some classes _X
  }

  bindingViolations(calls) {
    const bad = [];
    for (const c of calls) {
      const reasons = [];
      if (c["a2a-version"] !== this.protocol) {
        reasons.push(`A2A-Version ${c["a2a-version"]}`);
      }
      if (this.binding === "JSONRPC") {
        if (c.method !== "POST" || c.path !== "/") reasons.push("not POST /");
        // v0.3 method names have a slash (message/send, tasks/get); v1.0's do not (SendMessage).
        else if (typeof c.rpc !== "string" || c.rpc.includes("/") !== (this.protocol === "0.3")) {
          reasons.push(`method ${c.rpc}`);
        }
      } else if (this.protocol === "0.3" ? !c.path.startsWith("/v1/") : c.path === "/" || c.path.startsWith("/v1/")) {
        reasons.push("path");
      }
      if (reasons.length) bad.push({ ...c, reasons });
    }
    return bad;
  }

  summary(calls) {
    const seen = [];
    for (const c of calls) {
      let label;
      if ("rpc" in c) label = `POST / ${c.rpc}`;
      else {
        label = `${c.method} ${c.path.replace(/\/tasks\/[^/:]+/, "/tasks/{id}")}`;
        label = label.replace(/\/pushNotificationConfigs\/[^/]+$/, "/pushNotificationConfigs/{configId}");
      }
      if (!seen.includes(label)) seen.push(label);
    }
    return seen.join(", ");
  }

  async scenario(name, body, { via = "client", needs = [] } = {}) {
    const missing = needs.filter((n) => !this.scenarios.some((s) => s.name === n && s.ok));
    if (missing.length) {
      this.scenarios.push({ name, ok: false, via, detail: `skipped: ${show(missing)} failed` });
      return;
    }
    const start = this.requests.length;
    const began = performance.now();
    let timer;
    let ok;
    let detail;
    try {
      const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new CheckFailed(`timed out after ${SCENARIO_SECONDS}s`)), SCENARIO_SECONDS * 1000);
      });
      detail = await Promise.race([body.call(this), timeout]);
      const calls = this.requests.slice(start).filter((c) => c.path !== CARD_PATH);
      const bad = this.bindingViolations(calls);
      expect(!bad.length, `requests off the ${this.binding} ${this.protocol} binding: ${show(bad)}`);
      ok = true;
      if (calls.length) detail = `${detail} [${this.summary(calls)}]`;
    } catch (error) {
      // every failure is reported, the other scenarios still run
      ok = false;
      detail = `${errorClass(error)}: ${error?.message}`;
      if (!(error instanceof CheckFailed) && error?.stack) {
        detail += " | " + error.stack.split("\n").slice(1, 4).map((l) => l.trim()).join(" | ");
      }
    } finally {
      clearTimeout(timer);
    }
    this.scenarios.push({ name, ok, via, detail, seconds: Math.round(performance.now() - began) / 1000 });
  }

  // -- helpers ------------------------------------------------------------------------------------

  async send(message, configuration = {}) {
    const result = await this.client.sendMessage(request("SendMessageRequest", { message, configuration }));
    expect(result && "status" in result && "id" in result, `expected a Task, got ${show(result)}`);
    return result;
  }

  get(taskId) {
    return this.client.getTask(request("GetTaskRequest", { id: taskId }));
  }

  async waitFor(taskId, states, within = 25) {
    const deadline = performance.now() + within * 1000;
    for (;;) {
      const task = await this.get(taskId);
      if (states.has(task.status?.state)) return task;
      expect(performance.now() < deadline, `task ${taskId} still ${stateName(task.status?.state)} after ${within}s`);
      await sleep(100);
    }
  }

  hook(suffix) {
    expect(this.webhook, "no --webhook given");
    return `${this.webhook}/${suffix}`;
  }

  get token() {
    return this.protocol === "0.3" ? "tok-v03-inline" : "tok-v1-inline";
  }

  // -- scenarios ----------------------------------------------------------------------------------

  async pushInline() {
    const url = this.hook("inline");
    const task = await this.send(userMessage("hello push"), {
      taskPushNotificationConfig: { url, token: this.token },
    });
    expect(task.status?.state === COMPLETED, `state ${stateName(task.status?.state)}`);
    expect(show(artifactTexts(task)) === show(["Echo: hello push"]), `artifacts ${show(artifactTexts(task))}`);
    this.tasks.push_inline = task;
    return `task ${task.id} completed; inline config -> ${url}`;
  }

  async cardDiscovery() {
    const served = (this.served.supportedInterfaces ?? []).filter((i) => i.protocolBinding === this.binding);
    const versions = served.map((i) => i.protocolVersion).sort();
    expect(show(versions) === show(["0.3", "1.0"]), `served ${this.binding} interfaces ${show(served)}`);
    const wanted = {
      "1.0": { JSONRPC: "JsonRpcTransport", "HTTP+JSON": "RestTransport" },
      "0.3": { JSONRPC: "LegacyJsonRpcTransport", "HTTP+JSON": "LegacyRestTransport" },
    }[this.protocol][this.binding];
    expect(this.transport === wanted, `client picked ${this.transport}, wanted ${wanted}`);
    expect(this.client.protocolVersion === this.protocol, `client protocolVersion ${this.client.protocolVersion}`);
    expect(this.card.capabilities?.streaming && this.card.capabilities?.pushNotifications, `capabilities ${show(this.card.capabilities)}`);
    const url = served.find((i) => i.protocolVersion === this.protocol).url;
    if (this.protocol === "1.0") {
      return `${this.binding} interfaces ${show(versions)}; client picked the 1.0 ${this.transport} at ${url}`;
    }
    // The v0.3 card fields alone, as the SDK's compat layer reads them: the same 0.3 interface.
    expect(this.legacyCardDetected, "isLegacyAgentCard() does not take the card's v0.3 fields for a v0.3 card");
    const legacy = (this.card.supportedInterfaces ?? []).filter((i) => i.protocolBinding === this.binding);
    // (one from url + preferredTransport, stamped with the card's protocolVersion 0.3.0, one from
    // additionalInterfaces, stamped 0.3: the 0.3 spec lists the main interface there too)
    const same = legacy.filter((i) => i.url === url && /^0\.3(\.|$)/.test(i.protocolVersion));
    expect(legacy.length && same.length === legacy.length, `parseLegacyAgentCard: ${show(legacy)}, served 0.3 at ${url}`);
    return `the card's v0.3 fields (url, preferredTransport, additionalInterfaces) via parseLegacyAgentCard: ${this.binding} 0.3 at ${url}, as served; client picked ${this.transport}`;
  }

  async sendBlocking() {
    const contextId = `interop-js-${randomUUID()}`;
    const task = await this.send(userMessage("hello interop", { contextId }));
    expect(task.status?.state === COMPLETED, `state ${stateName(task.status?.state)}`);
    expect(task.contextId === contextId, `contextId ${task.contextId} != ${contextId}`);
    expect(show(artifactTexts(task)) === show(["Echo: hello interop"]), `artifacts ${show(artifactTexts(task))}`);
    this.tasks.send_blocking = task;
    return `task ${task.id} ${stateName(task.status.state)}, artifact 'Echo: hello interop'`;
  }

  async sendNonBlocking() {
    const task = await this.send(userMessage("sleep 1"), { returnImmediately: true });
    expect(RUNNING.has(task.status?.state), `returnImmediately send returned ${stateName(task.status?.state)}`);
    const returned = stateName(task.status.state);
    const done = await this.waitFor(task.id, TERMINAL);
    expect(done.status.state === COMPLETED, `ended ${stateName(done.status.state)}`);
    expect(show(artifactTexts(done)) === show(["slept 1s"]), `artifacts ${show(artifactTexts(done))}`);
    return `returned ${returned}, then get saw COMPLETED with 'slept 1s'`;
  }

  async getTask() {
    const sent = this.tasks.send_blocking;
    const got = await this.get(sent.id);
    expect(got.id === sent.id && got.contextId === sent.contextId, `ids ${got.id}/${got.contextId}`);
    expect(got.status?.state === COMPLETED, `state ${stateName(got.status?.state)}`);
    expect(show(artifactTexts(got)) === show(artifactTexts(sent)), `artifacts ${show(artifactTexts(got))}`);
    const users = (got.history ?? []).filter((m) => m.role === Role.ROLE_USER);
    expect(users.length && show(texts(users[0].parts)) === show(["hello interop"]), `history ${show(got.history)}`);
    return `task ${got.id}: COMPLETED, same artifact, history starts with the user message`;
  }

  async errors() {
    // The errors the client types: an unknown task (get, cancel, push config get, a streamed send
    // continuing it) and a cancel of a completed task; the class each call threw is recorded.
    const missing = `no-such-task-${randomUUID()}`;
    const seen = [];
    const refused = async (errorType, what, call) => seen.push(`${what}: ${await refusedWith(errorType, call, what)}`);
    await refused(TaskNotFoundError, "get", () => this.get(missing));
    await refused(TaskNotFoundError, "cancel", () => this.client.cancelTask(request("CancelTaskRequest", { id: missing })));
    await refused(TaskNotFoundError, "push config get", () =>
      this.client.getTaskPushNotificationConfig(request("GetTaskPushNotificationConfigRequest", { taskId: missing, id: "c" })),
    );
    await refused(TaskNotFoundError, "stream", async () => {
      const message = userMessage("hello", { taskId: missing });
      const events = [];
      for await (const event of this.client.sendMessageStream(request("SendMessageRequest", { message }))) events.push(event);
      return events;
    });
    const done = await this.send(userMessage("hello errors"));
    expect(done.status?.state === COMPLETED, `state ${stateName(done.status?.state)}`);
    await refused(TaskNotCancelableError, "cancel of a completed task", () =>
      this.client.cancelTask(request("CancelTaskRequest", { id: done.id })),
    );
    return seen.join("; ");
  }

  async listTasks() {
    const sent = this.tasks.send_blocking;
    const listed = await this.client.listTasks(
      request("ListTasksRequest", { contextId: sent.contextId, includeArtifacts: true }),
    );
    const ids = (listed.tasks ?? []).map((t) => t.id);
    expect(show(ids) === show([sent.id]), `listed ${show(ids)}`);
    expect(show(artifactTexts(listed.tasks[0])) === show(["Echo: hello interop"]), "artifacts");
    return `context ${sent.contextId} lists exactly the sent task`;
  }

  async stream() {
    const events = [];
    for await (const event of this.client.sendMessageStream(
      request("SendMessageRequest", { message: userMessage("hello stream") }),
    )) {
      events.push(event);
    }
    const kinds = events.map((e) => e.payload?.$case);
    expect(kinds[0] === "task", `events ${show(kinds)}`);
    const taskId = events[0].payload.value.id;
    for (const event of events.slice(1)) {
      expect(["statusUpdate", "artifactUpdate"].includes(event.payload?.$case), `event ${show(event)}`);
      expect(event.payload.value.taskId === taskId, `update of another task: ${show(event)}`);
    }
    const last = events.at(-1).payload;
    expect(last.$case === "statusUpdate" && last.value.status?.state === COMPLETED, `last event ${show(last)}`);
    const echoed = events.filter((e) => e.payload.$case === "artifactUpdate").flatMap((e) => texts(e.payload.value.artifact?.parts));
    expect(show(echoed) === show(["Echo: hello stream"]), `artifact updates ${show(echoed)}`);
    const got = await this.get(taskId);
    expect(got.status?.state === COMPLETED, `get after the stream: ${stateName(got.status?.state)}`);
    this.tasks.stream = got;
    return `events ${show(kinds)}; final COMPLETED, artifact 'Echo: hello stream'`;
  }

  async cancel() {
    const task = await this.send(userMessage("sleep 20"), { returnImmediately: true });
    expect(RUNNING.has(task.status?.state), `returnImmediately send returned ${stateName(task.status?.state)}`);
    let canceled = await this.client.cancelTask(request("CancelTaskRequest", { id: task.id }));
    expect(canceled.id === task.id, `cancel answered for ${canceled.id}`);
    const answered = stateName(canceled.status?.state);
    if (canceled.status?.state !== CANCELED) canceled = await this.waitFor(task.id, TERMINAL); // acknowledged asynchronously
    expect(canceled.status.state === CANCELED, `ended ${stateName(canceled.status.state)}`);
    const refused = await refusedWith(
      TaskNotCancelableError,
      () => this.client.cancelTask(request("CancelTaskRequest", { id: task.id })),
      "a second cancel of the canceled task",
    );
    const final = await this.get(task.id);
    expect(final.status?.state === CANCELED, `get after cancel: ${stateName(final.status?.state)}`);
    this.tasks.cancel = final;
    return `cancel answered ${answered}, task CANCELED; second cancel refused (${refused})`;
  }

  async resubscribe() {
    const task = await this.send(userMessage("sleep 2"), { returnImmediately: true });
    expect(RUNNING.has(task.status?.state), `returnImmediately send returned ${stateName(task.status?.state)}`);
    const events = [];
    for await (const event of this.client.resubscribeTask(request("SubscribeToTaskRequest", { id: task.id }))) events.push(event);
    const kinds = events.map((e) => e.payload?.$case);
    expect(events.length, "resubscribe yielded nothing");
    for (const { payload } of events) {
      const id = payload?.$case === "task" ? payload.value.id : payload?.value?.taskId;
      expect(id === task.id, `event of another task: ${show(payload)}`);
    }
    const last = events.at(-1).payload;
    expect(last.$case === "statusUpdate" && last.value.status?.state === COMPLETED, `last event ${show(last)}`);
    const slept = events.filter((e) => e.payload.$case === "artifactUpdate").flatMap((e) => texts(e.payload.value.artifact?.parts));
    const snapshot = events.filter((e) => e.payload.$case === "task").flatMap((e) => artifactTexts(e.payload.value));
    expect(show([...slept, ...snapshot]) === show(["slept 2s"]), `artifacts ${show(slept)} + ${show(snapshot)}`);
    return `resubscribeTask: ${events.length} events ${show(kinds)}; stream ended at COMPLETED`;
  }

  async pushSet() {
    const taskId = this.tasks.send_blocking.id;
    const url = this.hook("crud");
    const named = await this.client.createTaskPushNotificationConfig(
      request("TaskPushNotificationConfig", { taskId, id: "cfg-a", url, token: "tok-a" }),
    );
    expect(
      show([named.taskId, named.id, named.url, named.token]) === show([taskId, "cfg-a", url, "tok-a"]),
      `created ${show(named)}`,
    );
    const unnamed = await this.client.createTaskPushNotificationConfig(request("TaskPushNotificationConfig", { taskId, url }));
    if (this.protocol === "0.3") {
      expect(unnamed.id === taskId, `id-less config got id ${show(unnamed.id)}, not the task id (0.3 semantics)`);
    } else {
      expect(unnamed.id && unnamed.id !== "cfg-a", `id-less config got id ${show(unnamed.id)}`);
    }
    this.extraConfig = unnamed.id;
    return this.protocol === "0.3"
      ? "config 'cfg-a' set as given; an id-less config got the task id (0.3 semantics)"
      : `config 'cfg-a' created as given; an id-less config got id '${unnamed.id}'`;
  }

  async pushGet() {
    const taskId = this.tasks.send_blocking.id;
    const got = await this.client.getTaskPushNotificationConfig(request("GetTaskPushNotificationConfigRequest", { taskId, id: "cfg-a" }));
    expect(
      show([got.taskId, got.id, got.url, got.token]) === show([taskId, "cfg-a", this.hook("crud"), "tok-a"]),
      `got ${show(got)}`,
    );
    const other = await this.client.getTaskPushNotificationConfig(
      request("GetTaskPushNotificationConfigRequest", { taskId, id: this.extraConfig }),
    );
    expect(other.id === this.extraConfig, `get of config ${this.extraConfig} answered ${show(other)}`);
    return "both configs read back (url, token, id)";
  }

  async configIds(taskId) {
    const listed = await this.client.listTaskPushNotificationConfig(request("ListTaskPushNotificationConfigsRequest", { taskId }));
    for (const c of listed.configs ?? []) expect(c.taskId === taskId, `listed a config of task ${c.taskId}`);
    return (listed.configs ?? []).map((c) => c.id).sort();
  }

  async pushList() {
    const taskId = this.tasks.send_blocking.id;
    const listed = await this.client.listTaskPushNotificationConfig(request("ListTaskPushNotificationConfigsRequest", { taskId }));
    const ids = (listed.configs ?? []).map((c) => c.id).sort();
    expect(show(ids) === show(["cfg-a", this.extraConfig].sort()), `listed ${show(ids)}`);
    const named = listed.configs.find((c) => c.id === "cfg-a");
    expect(named.taskId === taskId && named.url === this.hook("crud") && named.token === "tok-a", `listed ${show(named)}`);
    return "lists both configs";
  }

  async pushDelete() {
    const taskId = this.tasks.send_blocking.id;
    await this.client.deleteTaskPushNotificationConfig(request("DeleteTaskPushNotificationConfigRequest", { taskId, id: "cfg-a" }));
    const gone = await refusedWith(
      TaskNotFoundError,
      () => this.client.getTaskPushNotificationConfig(request("GetTaskPushNotificationConfigRequest", { taskId, id: "cfg-a" })),
      "get of the deleted config",
    );
    let left = await this.configIds(taskId);
    expect(show(left) === show([this.extraConfig]), `listed after delete: ${show(left)}`);
    await this.client.deleteTaskPushNotificationConfig(
      request("DeleteTaskPushNotificationConfigRequest", { taskId, id: this.extraConfig }),
    );
    left = await this.configIds(taskId);
    expect(show(left) === show([]), `listed after deleting both: ${show(left)}`);
    return `deleted; get of the deleted config refused (${gone}); list shrinks to []`;
  }

  async listAbsent() {
    // ListTasks does not exist in 0.3: the compat transports refuse it without a request
    // (LegacyRestTransport: UnsupportedOperationError; LegacyJsonRpcTransport: a JsonRpcTransportError
    // "Method not found: tasks/list").
    const start = this.requests.length;
    const thrown = await refusedWith(A2AError, () => this.client.listTasks(request("ListTasksRequest", {})), "listTasks in 0.3 mode");
    expect(this.requests.length === start, `listTasks sent ${show(this.requests.slice(start))}`);
    return thrown;
  }

  async run() {
    await this.scenario("push_inline", this.pushInline);
    await this.scenario("card", this.cardDiscovery);
    await this.scenario("send_blocking", this.sendBlocking);
    await this.scenario("send_non_blocking", this.sendNonBlocking);
    await this.scenario("get", this.getTask, { needs: ["send_blocking"] });
        if (this.protocol === "0.3") {
      let detail;
      try {
        detail = `no ListTasks in A2A 0.3 (the client's listTasks throws ${await this.listAbsent()} without a request)`;
      } catch (error) {
        detail = null;
        this.scenarios.push({ name: "list", ok: false, via: "client", detail: `${errorClass(error)}: ${error.message}` });
      }
      if (detail) this.scenarios.push({ name: "list", ok: null, via: "n/a", detail });
    } else {
      await this.scenario("list", this.listTasks, { needs: ["send_blocking"] });
    }
    await this.scenario("stream", this.stream);
    await this.scenario("cancel", this.cancel);
    await this.scenario("errors", this.errors);
    await this.scenario("resubscribe", this.resubscribe);
    await this.scenario("push_set", this.pushSet, { needs: ["send_blocking"] });
    await this.scenario("push_get", this.pushGet, { needs: ["push_set"] });
    await this.scenario("push_list", this.pushList, { needs: ["push_set"] });
    await this.scenario("push_delete", this.pushDelete, { needs: ["push_set"] });
    return {
      client: `@a2a-js/sdk ${manifest.version}`,
      binding: this.binding,
      protocol: this.protocol,
      transport: this.transport,
      scenarios: this.scenarios,
      tasks: Object.fromEntries(Object.entries(this.tasks).map(([k, t]) => [k, core.Task.toJSON(t)])),
      requests: this.requests,
    };
  }

  /** Reads tasks another client created, continues them, creates one for the other to read. */
  async cross(read, answer, create) {
    const out = { client: `@a2a-js/sdk ${manifest.version}`, binding: this.binding, protocol: this.protocol };
    out.read = {};
    for (const id of read) out.read[id] = core.Task.toJSON(await this.get(id));
    out.answered = {};
    for (const item of answer) {
      const [id, text] = [item.slice(0, item.indexOf("=")), item.slice(item.indexOf("=") + 1)];
      const task = await this.get(id);
      out.answered[id] = core.Task.toJSON(await this.send(userMessage(text, { taskId: id, contextId: task.contextId })));
    }
    if (create !== undefined) out.created = core.Task.toJSON(await this.send(userMessage(create)));
    out.binding_violations = this.bindingViolations(this.requests.filter((c) => c.path !== CARD_PATH));
    out.requests = this.requests;
    return out;
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      "base-url": { type: "string" },
      binding: { type: "string" },
      protocol: { type: "string", default: "1.0" },
      webhook: { type: "string" },
      read: { type: "string", multiple: true, default: [] },
      answer: { type: "string", multiple: true, default: [] },
      create: { type: "string" },
    },
  });
  if (!values["base-url"] || !["JSONRPC", "HTTP+JSON"].includes(values.binding) || !["1.0", "0.3"].includes(values.protocol)) {
    console.error(
      "usage: driver_js.mjs --base-url URL --binding JSONRPC|HTTP+JSON --protocol 1.0|0.3 [--webhook URL]" +
        " [--read TASK_ID ...] [--answer TASK_ID=TEXT ...] [--create TEXT]",
    );
    return 64;
  }
  const driver = new Driver(values["base-url"], values.binding, values.protocol, values.webhook);
  try {
    await driver.connect();
  } catch (error) {
    console.log(JSON.stringify({ fatal: `${errorClass(error)}: ${error?.message}`, requests: driver.requests }));
    return 2;
  }
  const cross = values.read.length || values.answer.length || values.create !== undefined;
  try {
    const document = cross ? await driver.cross(values.read, values.answer, values.create) : await driver.run();
    console.log(JSON.stringify(document, null, 1));
  } catch (error) {
    console.log(JSON.stringify({ fatal: `${errorClass(error)}: ${error?.message}`, requests: driver.requests }));
    return 2;
  }
  return 0;
}

// A scenario that timed out may leave a request open: exit once the document is written.
const code = await main();
process.stdout.write("", () => process.exit(code));
