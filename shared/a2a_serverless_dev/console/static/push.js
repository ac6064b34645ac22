// Push: your dead letters on the local stack's push dead-letter queue, a button that redrives them,
// and what became of each delivery the redrive moved (delivered, failed again, or still pending).

import { devApi } from "./a2a.js";
import { el } from "./render.js";

const FOLLOW_MS = 2000;
const FOLLOW_FOR_MS = 120000;

function events(d) {
  return `${d.fromSeq || "after cursor"}..${d.upToSeq}`;
}

export function setUpPush(agent) {
  const status = document.getElementById("push-status");
  const rows = document.querySelector("#push-table tbody");
  const redrive = document.getElementById("push-redrive");
  // The last redrive: what it moved, each delivery's outcome as the console follows it.
  const summary = el("p", { id: "push-redriven-status", class: "muted" });
  const moved = el("tbody", {});
  const box = el("div", { id: "push-redriven", hidden: "" },
    el("h3", { text: "Last redrive" }), summary,
    el("table", { id: "push-redriven-table" },
      el("thead", {}, el("tr", {}, ...["Task", "Config", "Events", "Outcome"].map((h) => el("th", { text: h })))),
      moved));
  redrive.after(box);
  let following = null;

  async function load() {
    rows.replaceChildren();
    redrive.hidden = true;
    if (agent().remote) {
      status.textContent = "Dead letters are the local stack's: connect back to this agent (empty URL) to see them.";
      return;
    }
    try {
      const answer = await devApi("/dead-letters");
      if (!answer.configured) {
        status.textContent = "This stack has no push dead-letter queue.";
        return;
      }
      const count = answer.deadLetters.length;
      status.textContent = answer.complete
        ? `${count} dead letter(s).`
        : `At least ${count} dead letter(s): some could not be read now (in flight, or behind an earlier one of their webhook).`;
      for (const d of answer.deadLetters) {
        const error = d.lastError || "(receive count)";
        rows.append(el("tr", { class: "dead-letter-row", "data-redrive": d.redrive || "" },
          el("td", {}, el("code", { text: d.taskId })), el("td", { text: d.configId }),
          el("td", { text: events(d) }), el("td", { text: d.redrive ? `${error} (failed again after a redrive)` : error })));
      }
      redrive.hidden = count === 0;
    } catch (error) {
      status.textContent = `Could not read the dead letters: ${error.message}`;
    }
  }

  redrive.addEventListener("click", async () => {
    redrive.disabled = true;
    try {
      const answer = await devApi("/dead-letters:redrive", { method: "POST" });
      box.hidden = false;
      show(answer.moved.map((m) => ({ ...m, outcome: "pending", returned: [] })));
      summary.textContent = `Moved ${answer.moved.length} dead letter(s) back onto the delivery queue.`;
      await load();
      follow(answer, Date.now());
    } catch (error) {
      status.textContent = `Redrive failed: ${error.message}`;
    } finally {
      redrive.disabled = false;
    }
  });

  // Asks what became of the moved deliveries until none is pending (at most FOLLOW_FOR_MS).
  async function follow(run, started) {
    clearTimeout(following);
    if (!run.moved.length) return;
    try {
      const answer = await devApi("/dead-letters:redrive-outcomes", {
        method: "POST",
        body: { redriveId: run.redriveId, moved: run.moved },
      });
      show(answer.outcomes);
      const count = (outcome) => answer.outcomes.filter((o) => o.outcome === outcome).length;
      const pending = count("pending");
      summary.textContent = `Moved ${run.moved.length} dead letter(s): ${count("delivered")} delivered, ` +
        `${count("failed again")} failed again (back on the dead-letter queue once, not redriven again), ${pending} pending.`;
      if (!pending) {
        load();
      } else if (Date.now() - started < FOLLOW_FOR_MS) {
        following = setTimeout(() => follow(run, started), FOLLOW_MS);
      } else {
        summary.textContent += " Their retries go on: Refresh to see the dead letters later.";
      }
    } catch (error) {
      summary.textContent = `Could not follow the redrive: ${error.message}`;
    }
  }

  function show(outcomes) {
    moved.replaceChildren(...outcomes.map((o) => el("tr", { class: "redriven", "data-outcome": o.outcome },
      el("td", {}, el("code", { text: o.taskId })), el("td", { text: o.configId }), el("td", { text: events(o) }),
      el("td", { text: describe(o) }))));
  }

  function describe(o) {
    if (o.outcome === "failed again") return `failed again: ${o.returned.map((r) => `events ${events(r)}: ${r.lastError}`).join("; ")}`;
    if (o.outcome === "pending") return "pending (being delivered)";
    return "delivered";
  }

  document.getElementById("push-refresh").addEventListener("click", load);
  return { load };
}
