// Manual mode: the 8 buttons (A0_PreProcessing … Prompt_Builder) in stage order,
// each running the registry stages grouped under it (StepResponse.buttons), and showing what
// changed in the SuperPrompt. Kept in its own file: it wraps app.js's renderStageButtons and
// renderStageView and uses its helpers (el, $, ui, advance), so the rest of the page is untouched.
"use strict";

const manual = {
  changes: {}, // button name -> [{field, before, after}]
  running: false,
};

// RequestState fields that make up the SuperPrompt (docs/superprompt.md) and what A-stages decide.
const SUPERPROMPT_FIELDS = [
  "stage",
  "body",
  "shape",
  "prompt_ready",
  "views_by_stage",
  "final_selection_ids",
  "system_md",
  "prompt_md",
  "s_ctx_md",
  "attachments_md",
  "extras",
];

function superpromptSnapshot() {
  if (!ui.step) return {};
  const state = JSON.parse(ui.step.state);
  return Object.fromEntries(SUPERPROMPT_FIELDS.map((f) => [f, state[f]]));
}

function changedFields(before, after) {
  const out = [];
  for (const f of SUPERPROMPT_FIELDS) {
    const a = JSON.stringify(before[f] ?? null);
    const b = JSON.stringify(after[f] ?? null);
    if (a !== b) out.push({ field: f, after: after[f] });
  }
  return out;
}

function buttonOf(stage) {
  return (ui.step?.buttons || []).find((b) => b.stages.includes(stage)) || null;
}

async function runButton(button) {
  if (manual.running || ui.busy) return;
  manual.running = true;
  const before = superpromptSnapshot();
  try {
    while (ui.step && button.stages.includes(ui.step.next_stage) && !ui.step.result) {
      const at = ui.step.next_stage;
      await advance(false);
      if (!ui.step || ui.step.next_stage === at) break; // an error was shown; stop here
    }
  } finally {
    manual.running = false;
  }
  manual.changes[button.name] = changedFields(before, superpromptSnapshot());
  const done = button.stages.filter((s) => s in ui.views);
  if (done.length) ui.selected = done[done.length - 1];
  renderStageButtons();
  renderStageView();
}

function renderSeedButtons() {
  const box = $("#stage-buttons");
  box.replaceChildren();
  const step = ui.step;
  step.buttons.forEach((button, i) => {
    const done = button.stages.every((s) => s in ui.views);
    const started = button.stages.some((s) => s in ui.views);
    const next = button.stages.includes(step.next_stage);
    const failed = button.stages.some((s) => s in ui.views && ui.views[s].note.startsWith("FAILED"));
    const selected = buttonOf(ui.selected)?.name === button.name;
    const cls = ["stage-btn", "seed-btn", done ? "done" : "", next ? "next" : "", failed ? "failed" : "", selected ? "selected" : ""].join(" ");
    box.append(
      el(
        "button",
        {
          type: "button",
          class: cls,
          "data-button": button.name,
          "data-stage": button.stages[0],
          disabled: ui.busy || manual.running || (!started && !next),
          title: next ? `Run ${button.stages.map((s) => step.labels[s] || s).join(", ")}` : started ? "Show what this step changed" : "Runs after the steps before it",
          onclick: () => {
            if (next) {
              runButton(button);
            } else if (started) {
              const ran = button.stages.filter((s) => s in ui.views);
              ui.selected = ran[ran.length - 1];
              renderStageButtons();
              renderStageView();
            }
          },
        },
        el("span", { class: "num", text: String(i + 1) }),
        el("span", { class: "lbl", text: button.name.replace(/_/g, " ") }),
      ),
    );
  });
  const nextButton = buttonOf(step.next_stage);
  $("#pipeline-hint").textContent = nextButton
    ? `Next: ${nextButton.name} — press its button, or run all.`
    : "All stages ran. Click a step to inspect it.";
  $("#run-all").disabled = ui.busy || manual.running || step.next_stage === null;
  $("#run-all").hidden = step.next_stage === null;
}

function renderGroupSummary() {
  const button = buttonOf(ui.selected);
  if (!button) return;
  const box = $("#stage-view");
  const index = ui.step.buttons.findIndex((b) => b.name === button.name) + 1;
  const parts = button.stages.filter((s) => s in ui.views);
  const summary = el(
    "div",
    { class: "seed-summary", "data-button": button.name },
    el("h3", { class: "seed-title", text: `${index} · ${button.name}` }),
    parts.length > 1
      ? el(
          "ul",
          { class: "seed-parts" },
          parts.map((s) =>
            el(
              "li",
              {},
              el("button", {
                type: "button",
                class: `ghost part${s === ui.selected ? " selected" : ""}`,
                "data-part": s,
                text: ui.step.labels[s] || s,
                onclick: () => {
                  ui.selected = s;
                  renderStageButtons();
                  renderStageView();
                },
              }),
              el("span", { class: "muted small", text: ` ${ui.views[s].note}` }),
            ),
          ),
        )
      : null,
  );
  const changes = manual.changes[button.name];
  if (changes) {
    summary.append(el("h4", { text: changes.length ? "What changed in the SuperPrompt" : "The SuperPrompt did not change" }));
    for (const c of changes) {
      const text = typeof c.after === "string" ? c.after : JSON.stringify(c.after, null, 2);
      summary.append(
        el("details", { class: "seed-change", "data-field": c.field }, el("summary", { class: "mono small", text: c.field }), el("pre", { class: "small", text: text || "(empty)" })),
      );
    }
  }
  box.prepend(summary);
}

// Wrap app.js's renderers: the 8 seed buttons replace the per-stage buttons when the server
// sends them; the per-stage view stays as it is, with the step's summary on top.
const baseRenderStageButtons = renderStageButtons;
const baseRenderStageView = renderStageView;
renderStageButtons = function () {
  if (ui.step && ui.step.buttons && ui.step.buttons.length) renderSeedButtons();
  else baseRenderStageButtons();
};
renderStageView = function () {
  baseRenderStageView();
  if (ui.step && ui.step.buttons && ui.step.buttons.length && ui.views[ui.selected]) renderGroupSummary();
};
