// Card: the agent card rendered, with the problems a client would hit listed (missing fields,
// interfaces that do not answer).

import { newId } from "./a2a.js";
import { el } from "./render.js";

const REQUIRED_10 = ["name", "description", "version", "supportedInterfaces", "capabilities", "defaultInputModes", "defaultOutputModes", "skills"];
const REQUIRED_03 = ["name", "description", "version", "url", "protocolVersion", "capabilities", "defaultInputModes", "defaultOutputModes", "skills"];

export function cardVersion(card) {
  const interfaces = card.supportedInterfaces || [];
  if (interfaces.some((i) => String(i.protocolVersion || "").startsWith("1."))) return "1.0";
  return String(card.protocolVersion || "").startsWith("0.3") ? "0.3" : "1.0";
}

export function jsonRpcUrl(card, version) {
  if (version === "1.0") {
    const found = (card.supportedInterfaces || []).find((i) => i.protocolBinding === "JSONRPC" && String(i.protocolVersion).startsWith("1."));
    if (found) return found.url;
  }
  if (card.preferredTransport === "JSONRPC" || !card.preferredTransport) return card.url;
  const other = (card.additionalInterfaces || []).find((i) => i.transport === "JSONRPC");
  return other ? other.url : null;
}

function missing(card, version) {
  const problems = [];
  for (const field of version === "1.0" ? REQUIRED_10 : REQUIRED_03) {
    const value = card[field];
    if (value === undefined || value === null || value === "" || (Array.isArray(value) && value.length === 0 && field !== "skills")) {
      problems.push(`missing field ${field}`);
    }
  }
  (card.skills || []).forEach((skill, i) => {
    for (const field of ["id", "name", "description", "tags"]) if (!skill[field]) problems.push(`skill ${i + 1} has no ${field}`);
  });
  if (!jsonRpcUrl(card, version)) problems.push("no JSON-RPC interface: this console speaks JSON-RPC only");
  return problems;
}

function interfacesOf(card) {
  if (card.supportedInterfaces) return card.supportedInterfaces.map((i) => ({ url: i.url, binding: i.protocolBinding, version: i.protocolVersion }));
  const main = { url: card.url, binding: card.preferredTransport || "JSONRPC", version: card.protocolVersion };
  return [main, ...(card.additionalInterfaces || []).map((i) => ({ url: i.url, binding: i.transport, version: card.protocolVersion }))];
}

// Does the interface answer A2A? Each probe is a read that succeeds on any agent (a failing one, such
// as a GetTask of an unknown task over REST, would put a 404 in the browser's console as an error).
// JSON-RPC: GetTask of a task that cannot exist, whose A2A error comes in an HTTP 200. REST 1.0:
// ListTasks of one task without history (spec section 3.1.4). REST 0.3 has no such read.
async function probe(agent, face) {
  const v03 = String(face.version || "").startsWith("0.3");
  const headers = { Accept: "application/json" };
  if (!v03) headers["A2A-Version"] = "1.0";
  if (face.binding === "JSONRPC") {
    headers["Content-Type"] = "application/json";
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: v03 ? "tasks/get" : "GetTask", params: { id: newId() } });
    const answer = await (await agent.fetch(face.url, { method: "POST", headers, body })).json();
    if (!answer.error && !answer.result) throw new Error("not a JSON-RPC answer");
    return "answers";
  }
  if (face.binding === "HTTP+JSON" && v03) return "not probed (A2A 0.3 REST has no read that needs no task)";
  if (face.binding === "HTTP+JSON") {
    const response = await agent.fetch(`${face.url.replace(/\/+$/, "")}/tasks?pageSize=1&historyLength=0`, { headers });
    const answer = await response.json().catch(() => null);
    if (response.ok && answer && Array.isArray(answer.tasks)) return "answers";
    if (answer && answer.error) return `answers, with an error to ListTasks: HTTP ${response.status} ${answer.error.message || ""}`;
    throw new Error(`ListTasks answered HTTP ${response.status}, not a ListTasksResponse`);
  }
  return "not probed (binding unknown to the console)";
}

export async function showCard(agent, card) {
  const version = cardVersion(card);
  const problems = missing(card, version);
  document.getElementById("card-name").textContent = `${card.name || "(no name)"} ${card.version ? "v" + card.version : ""}`;
  document.getElementById("card-description").textContent = card.description || "";
  document.getElementById("card-raw").textContent = JSON.stringify(card, null, 2);
  const skills = document.getElementById("card-skills");
  skills.replaceChildren(...(card.skills || []).map((s) => el("li", {}, el("strong", { text: s.name || s.id }), ` ${s.description || ""}`,
    (s.examples || []).length ? el("span", { class: "muted", text: ` e.g. ${s.examples.join(", ")}` }) : null)));
  const list = document.getElementById("card-interfaces");
  list.replaceChildren();
  const checks = interfacesOf(card).map(async (face) => {
    const item = el("li", { text: `${face.binding} ${face.version || "?"} at ${face.url}: probing…` });
    list.append(item);
    try {
      item.textContent = `${face.binding} ${face.version || "?"} at ${face.url}: ${await probe(agent, face)}`;
    } catch (error) {
      item.textContent = `${face.binding} ${face.version || "?"} at ${face.url}: does not answer`;
      problems.push(`interface ${face.binding} ${face.version || ""} at ${face.url} does not answer: ${error.message}`);
    }
  });
  await Promise.all(checks);
  const box = document.getElementById("card-problems");
  box.replaceChildren(...(problems.length ? problems.map((p) => el("li", { class: "problem", text: p })) : [el("li", { class: "ok", text: "none found" })]));
  return version;
}
