// Push: the local stack's dead-letter queue of push deliveries, and a button that redrives it.

import { API, CONSOLE_HEADERS } from "./a2a.js";
import { el } from "./render.js";

export function setUpPush(agent) {
  const status = document.getElementById("push-status");
  const rows = document.querySelector("#push-table tbody");
  const redrive = document.getElementById("push-redrive");

  async function load() {
    rows.replaceChildren();
    redrive.hidden = true;
    if (agent().remote) {
      status.textContent = "Dead letters are the local stack's: connect back to this agent (empty URL) to see them.";
      return;
    }
    try {
      const response = await fetch(`${API}/dead-letters`, { headers: CONSOLE_HEADERS });
      const answer = await response.json();
      if (!response.ok) throw new Error(answer.error || `HTTP ${response.status}`);
      if (!answer.configured) {
        status.textContent = "This stack has no push dead-letter queue.";
        return;
      }
      status.textContent = `${answer.deadLetters.length} dead letter(s).`;
      for (const d of answer.deadLetters) {
        rows.append(d.unreadable
          ? el("tr", {}, el("td", { colspan: "4", text: `message ${d.messageId}: not a delivery item` }))
          : el("tr", {}, el("td", {}, el("code", { text: d.taskId })), el("td", { text: d.configId }),
            el("td", { text: `${d.fromSeq || "after cursor"}..${d.upToSeq}` }), el("td", { text: d.lastError || "(receive count)" })));
      }
      redrive.hidden = answer.deadLetters.length === 0;
    } catch (error) {
      status.textContent = `Could not read the dead letters: ${error.message}`;
    }
  }

  redrive.addEventListener("click", async () => {
    const response = await fetch(`${API}/dead-letters:redrive`, { method: "POST", headers: CONSOLE_HEADERS });
    const answer = await response.json();
    await load();
    status.textContent = response.ok ? `Redrove ${answer.moved} dead letter(s). ${status.textContent}` : `Redrive failed: ${answer.error}`;
  });
  document.getElementById("push-refresh").addEventListener("click", load);
  return { load };
}
