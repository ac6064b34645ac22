// The console's entry point: tabs, the agent it talks to, and the panels.

import { Agent } from "./a2a.js";
import { cardVersion, jsonRpcUrl, showCard } from "./card.js";
import { setUpChat } from "./chat.js";
import { setUpPush } from "./push.js";
import { setUpTasks } from "./tasks.js";

let agent = new Agent("");
let tab = "chat";
const current = () => agent;

const chat = setUpChat(current);
const tasks = setUpTasks(current, () => tab === "tasks");
const push = setUpPush(current);

function show(name) {
  tab = name;
  for (const button of document.querySelectorAll("nav .tab")) button.classList.toggle("active", button.dataset.tab === name);
  for (const panel of document.querySelectorAll("main .panel")) panel.hidden = panel.id !== `tab-${name}`;
  if (name === "tasks") tasks.list();
  if (name === "push") push.load();
}

async function connect(base) {
  const status = document.getElementById("agent-status");
  status.textContent = "reading the card…";
  const probe = new Agent(base);
  try {
    const card = await probe.card();
    const version = cardVersion(card);
    agent = new Agent(base, version, jsonRpcUrl(card, version) || undefined);
    chat.reset(card);
    status.textContent = `${card.name || "agent"} (A2A ${version}${base ? ", through the dev proxy" : ""})`;
    await showCard(agent, card);
  } catch (error) {
    status.textContent = `cannot read the agent card: ${error.message}`;
  }
  if (tab !== "chat" && tab !== "card") show(tab);
}

for (const button of document.querySelectorAll("nav .tab")) button.addEventListener("click", () => show(button.dataset.tab));
document.getElementById("agent-form").addEventListener("submit", (event) => {
  event.preventDefault();
  connect(document.getElementById("agent-url").value.trim());
});
connect("");
