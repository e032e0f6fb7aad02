// citebound web page: plain JS, no build step. Every text from the server is inserted with
// textContent (never innerHTML), so document text cannot inject markup.
"use strict";

const $ = (sel) => document.querySelector(sel);
const ui = {
  mode: "auto",
  step: null, // last StepResponse
  views: {}, // stage -> StageView
  selected: null, // stage whose view is shown
  result: null, // AnswerView
  busy: false,
};

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k === "style") node.style.cssText = v; // CSSOM: allowed by the page's CSP
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

// --- HTTP ------------------------------------------------------------------------------------

async function api(path, { method = "GET", body } = {}) {
  const headers = { Accept: "application/json" };
  const key = localStorage.getItem("citebound.key");
  if (key) headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const resp = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = null;
  try {
    data = await resp.json();
  } catch (_) {
    data = null;
  }
  if (!resp.ok) {
    const detail = data && data.detail ? data.detail : `HTTP ${resp.status}`;
    const err = new Error(detail);
    err.status = resp.status;
    throw err;
  }
  return data;
}

function showError(message) {
  const box = $("#error");
  box.textContent = message;
  box.hidden = !message;
}

function setBusy(busy) {
  ui.busy = busy;
  document.body.classList.toggle("busy", busy);
  $("#ask-btn").disabled = busy;
  $("#run-all").disabled = busy || !ui.step || ui.step.next_stage === null;
  renderStageButtons();
}

// --- start-up --------------------------------------------------------------------------------

async function loadCollections() {
  const select = $("#collection");
  select.replaceChildren();
  try {
    const data = await api("/v1/collections");
    for (const name of data.collections) {
      select.append(el("option", { value: name, text: name, selected: name === data.default }));
    }
    if (!data.collections.length) select.append(el("option", { value: "", text: "(none)" }));
    showError("");
  } catch (err) {
    if (err.status === 401) {
      $("#key-form").hidden = false;
      showError("This server needs an API key: enter it at the top right.");
    } else {
      showError(err.message);
    }
  }
}

async function init() {
  try {
    const health = await api("/healthz");
    $("#key-form").hidden = !health.auth_required;
  } catch (err) {
    showError(`Server not reachable: ${err.message}`);
  }
  await loadCollections();
  $("#ask-form").addEventListener("submit", onAsk);
  $("#question").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      $("#ask-form").requestSubmit();
    }
  });
  $("#mode-auto").addEventListener("click", () => setMode("auto"));
  $("#mode-step").addEventListener("click", () => setMode("step"));
  $("#run-all").addEventListener("click", () => advance(true));
  $("#key-form").addEventListener("submit", (e) => {
    e.preventDefault();
    localStorage.setItem("citebound.key", $("#api-key").value.trim());
    $("#api-key").value = "";
    loadCollections();
  });
  for (const b of document.querySelectorAll("#feedback button")) {
    b.addEventListener("click", () => sendFeedback(b.dataset.verdict));
  }
  $("#doc-close").addEventListener("click", closeDocument);
  $("#doc-viewer").addEventListener("click", (e) => {
    if (e.target.id === "doc-viewer") closeDocument();
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape") closeDocument();
  });
}

function setMode(mode) {
  ui.mode = mode;
  $("#mode-auto").setAttribute("aria-pressed", String(mode === "auto"));
  $("#mode-step").setAttribute("aria-pressed", String(mode === "step"));
  $("#ask-btn").textContent = mode === "auto" ? "Ask" : "Start";
}

// --- asking and stepping ---------------------------------------------------------------------

async function onAsk(event) {
  event.preventDefault();
  const question = $("#question").value.trim();
  if (!question || ui.busy) return;
  ui.step = null;
  ui.views = {};
  ui.selected = null;
  ui.result = null;
  $("#result").hidden = true;
  showError("");
  setBusy(true);
  try {
    const body = { question, to_end: ui.mode === "auto" };
    const collection = $("#collection").value;
    if (collection) body.collection = collection;
    accept(await api("/v1/steps", { method: "POST", body }));
  } catch (err) {
    showError(err.message);
  } finally {
    setBusy(false);
  }
}

async function advance(toEnd) {
  if (!ui.step || ui.step.next_stage === null || ui.busy) return;
  showError("");
  setBusy(true);
  try {
    const body = { state: ui.step.state, state_token: ui.step.state_token, to_end: toEnd };
    if (!toEnd) body.stage = ui.step.next_stage;
    accept(await api("/v1/steps", { method: "POST", body }));
  } catch (err) {
    showError(err.message);
  } finally {
    setBusy(false);
  }
}

function accept(step) {
  ui.step = step;
  for (const view of step.views) ui.views[view.stage] = view;
  // Step mode shows the stage the user ran; the model call also runs validation, record and
  // packaging on the server (so no unvalidated text leaves it): their buttons turn done too.
  if (step.views.length) {
    ui.selected = ui.mode === "auto" ? step.views[step.views.length - 1].stage : step.views[0].stage;
  }
  // Auto mode opens on the stage that explains the outcome: the gate for a refusal, the
  // validator's verdict otherwise.
  if (ui.mode === "auto" && step.result) {
    const refused = step.result.response.status === "NO_EVIDENCE";
    const explain = refused && "a3" in ui.views ? "a3" : "validated";
    if (explain in ui.views && !ui.views[ui.selected]?.note.startsWith("FAILED")) ui.selected = explain;
  }
  $("#pipeline").hidden = false;
  renderStageButtons();
  renderStageView();
  if (step.result) renderResult(step.result);
}

function renderStageButtons() {
  const box = $("#stage-buttons");
  box.replaceChildren();
  const step = ui.step;
  if (!step) return;
  step.stage_order.forEach((stage, i) => {
    const done = stage in ui.views;
    const next = step.next_stage === stage;
    const failed = done && ui.views[stage].note.startsWith("FAILED");
    const cls = ["stage-btn", done ? "done" : "", next ? "next" : "", failed ? "failed" : "",
      ui.selected === stage ? "selected" : ""].join(" ");
    box.append(
      el(
        "button",
        {
          type: "button",
          class: cls,
          "data-stage": stage,
          disabled: ui.busy || (!done && !next),
          title: done ? "Show what this stage did" : next ? "Run this stage" : "Runs after the stages before it",
          onclick: () => {
            if (done) {
              ui.selected = stage;
              renderStageButtons();
              renderStageView();
            } else if (next) {
              advance(false);
            }
          },
        },
        el("span", { class: "num", text: String(i + 1) }),
        el("span", { class: "lbl", text: step.labels[stage] || stage }),
      ),
    );
  });
  const remaining = step.next_stage;
  $("#pipeline-hint").textContent = remaining
    ? `Next: ${step.labels[remaining]} — press its button, or run all.`
    : "All stages ran. Click a stage to inspect it.";
  $("#run-all").disabled = ui.busy || remaining === null;
  $("#run-all").hidden = remaining === null;
}

function chunkRow(k, extra) {
  const where = [k.heading_path.join(" › "), k.page ? `p. ${k.page}` : ""].filter(Boolean).join(", ");
  return el(
    "tr",
    {},
    el("td", { class: "mono", text: String(k.rank) }),
    el("td", {}, el("div", { class: "doc", text: k.document }), el("div", { class: "muted small", text: where })),
    el("td", {}, scoreBar(k.similarity)),
    extra || null,
    el("td", { class: "mono muted small", text: k.chunk_id.slice(0, 10), title: k.chunk_id }),
  );
}

function scoreBar(value) {
  const pct = Math.max(0, Math.min(100, Math.round(value * 100)));
  return el(
    "div",
    { class: "score", title: `similarity ${value.toFixed(3)}` },
    el("div", { class: "bar" }, el("div", { class: "fill", style: `width:${pct}%` })),
    el("span", { class: "mono small", text: value.toFixed(2) }),
  );
}

const ROWS_SHOWN = 12;

// A table of at most ROWS_SHOWN rows, with a button that shows the rest.
function rowsTable(cls, headers, items, row) {
  const body = el("tbody", {}, items.slice(0, ROWS_SHOWN).map(row));
  const table = el("table", { class: `chunks ${cls}` }, el("thead", {}, el("tr", {}, headers.map((h) => el("th", { text: h })))), body);
  if (items.length <= ROWS_SHOWN) return table;
  const more = el("button", {
    type: "button",
    class: "ghost more",
    text: `Show all ${items.length}`,
    onclick: () => {
      body.append(...items.slice(ROWS_SHOWN).map(row));
      more.remove();
    },
  });
  return el("div", {}, table, more);
}

function renderStageView() {
  const box = $("#stage-view");
  box.replaceChildren();
  const view = ui.views[ui.selected];
  if (!view) {
    box.append(el("p", { class: "muted", text: "Press the first stage button to start." }));
    return;
  }
  box.append(
    el(
      "div",
      { class: "stage-title" },
      el("h3", { text: `${view.index} · ${view.label}` }),
      el("span", { class: "muted small", text: `${view.latency_ms.toFixed(1)} ms` }),
    ),
    el("p", { class: "note", text: view.note || "—" }),
  );
  if (view.prompt_sha256) {
    box.append(
      el("p", { class: "kv" }, el("span", { class: "k", text: "Prompt sha256" }), el("code", { class: "prompt-hash", text: view.prompt_sha256 })),
    );
  }
  if (view.verdict) {
    const v = view.verdict;
    const cov = `${Math.round(v.attribution_coverage * 100)}% of factual sentences cited`;
    box.append(
      el(
        "div",
        { class: "verdict" },
        el("span", { class: `badge ${v.validation_status === "PASSED" ? "ok" : "fail"}`, text: `Validator: ${v.validation_status}` }),
        el("span", { class: "muted small", text: ` generation ${v.generation_status} · ${cov}` }),
        v.reason_codes.length ? el("div", { class: "codes" }, v.reason_codes.map((c) => el("span", { class: "code", text: c }))) : null,
        v.message ? el("p", { class: "muted small", text: v.message }) : null,
      ),
    );
  }
  if (view.kept.length) {
    box.append(
      el("h4", { text: `Kept (${view.kept.length})` }),
      rowsTable("kept", ["rank", "document", "similarity", "chunk"], view.kept, (k) => chunkRow(k)),
    );
  }
  if (view.dropped.length) {
    box.append(
      el("h4", { text: `Dropped (${view.dropped.length})` }),
      rowsTable("dropped", ["rank", "document", "similarity", "reason", "chunk"], view.dropped, (d) => {
        const reason = el("td", {}, el("span", { class: "code", text: d.reason_code, title: d.detail }), el("div", { class: "muted small", text: d.detail }));
        if (d.chunk) return chunkRow(d.chunk, reason);
        return el("tr", {}, el("td", {}), el("td", { class: "muted", text: "(unknown chunk)" }), el("td", {}), reason, el("td", { class: "mono small", text: d.chunk_id.slice(0, 10) }));
      }),
    );
  }
  if (!view.kept.length && !view.dropped.length && !view.prompt_sha256 && !view.verdict) {
    box.append(el("p", { class: "muted small", text: "This stage does not select chunks." }));
  }
}

// --- the answer ------------------------------------------------------------------------------

const STATUS = {
  OK: ["Answered", "ok"],
  NO_EVIDENCE: ["Refused", "refused"],
  FAILED: ["No answer", "fail"],
};

function renderResult(view) {
  ui.result = view;
  const r = view.response;
  const [label, cls] = STATUS[r.status] || [r.status, ""];
  const badge = $("#status-badge");
  badge.textContent = label;
  badge.className = `badge ${cls}`;
  const conf = $("#confidence");
  conf.replaceChildren();
  if (view.confidence.level !== "none") {
    conf.append(el("span", { class: `dot ${view.confidence.level}` }), `Confidence: ${view.confidence.level}`);
    conf.title = view.confidence.explanation;
  } else {
    conf.title = "";
  }
  const answer = $("#answer");
  answer.replaceChildren();
  answer.className = `answer ${cls}`;
  if (r.status === "OK") {
    answer.append(...withChips(r.answer, view.sources));
    if (r.low_confidence) answer.prepend(el("div", { class: "low", text: "LOW CONFIDENCE — limited source coverage" }));
  } else if (r.status === "NO_EVIDENCE") {
    answer.append(
      el("p", { class: "refusal-text", text: r.answer }),
      el("p", { class: "muted small", text: "The indexed documents do not support an answer, so citebound refuses instead of guessing. This is the exact refusal text." }),
    );
  } else {
    answer.append(
      el("p", { text: "The answer did not pass validation, so none is shown." }),
      el("p", {}, "Reason: ", el("span", { class: "code", text: r.failure_reason || "unknown" })),
    );
  }
  $("#answer-meta").textContent = `request ${r.request_id} · ${Math.round(r.latency_ms)} ms`;
  renderSources(view.sources);
  for (const b of document.querySelectorAll("#feedback button")) b.disabled = false;
  $("#feedback-status").textContent = "";
  $("#feedback-comment").value = "";
  $("#result").hidden = false;
}

function withChips(text, sources) {
  const byAnchor = Object.fromEntries(sources.map((s) => [s.anchor, s]));
  const out = [];
  let last = 0;
  for (const m of text.matchAll(/\[([^\]\s]{1,12})\]/g)) {
    const src = byAnchor[m[1]];
    if (!src) continue;
    out.push(document.createTextNode(text.slice(last, m.index)));
    out.push(
      el("button", {
        type: "button",
        class: `chip ${src.confidence}`,
        text: src.anchor,
        title: src.source_reference,
        "data-anchor": src.anchor,
        onclick: () => openDocument(src),
      }),
    );
    last = m.index + m[0].length;
  }
  out.push(document.createTextNode(text.slice(last)));
  return out;
}

function renderSources(sources) {
  const list = $("#sources");
  list.replaceChildren();
  $("#sources-empty").hidden = sources.length > 0;
  for (const s of sources) {
    const pct = Math.round(s.support * 100);
    list.append(
      el(
        "li",
        {},
        el(
          "button",
          { type: "button", class: "source", "data-anchor": s.anchor, onclick: () => openDocument(s), title: "Open the document at the cited passage" },
          el("span", { class: `chip ${s.confidence}`, text: s.anchor }),
          el(
            "span",
            { class: "source-body" },
            el("span", { class: "doc", text: s.document }),
            s.heading_path.length ? el("span", { class: "path", text: s.heading_path.join(" › ") }) : null,
            s.page ? el("span", { class: "page", text: `page ${s.page}` }) : null,
            el(
              "span",
              { class: "support", title: `${pct}% of the citing sentence's content words appear in this source` },
              el("span", { class: "bar" }, el("span", { class: `fill ${s.confidence}`, style: `width:${pct}%` })),
              el("span", { class: "small", text: `${s.confidence} confidence` }),
            ),
          ),
        ),
      ),
    );
  }
}

async function sendFeedback(verdict) {
  if (!ui.result) return;
  const status = $("#feedback-status");
  try {
    const rec = await api("/v1/feedback", {
      method: "POST",
      body: { request_id: ui.result.response.request_id, verdict, comment: $("#feedback-comment").value },
    });
    status.textContent = `Thanks — recorded as ${rec.verdict}.`;
    status.className = "feedback-status ok";
    for (const b of document.querySelectorAll("#feedback button")) b.disabled = true;
  } catch (err) {
    status.textContent = `Not recorded: ${err.message}`;
    status.className = "feedback-status fail";
  }
}

// --- the document view -----------------------------------------------------------------------

async function openDocument(source) {
  try {
    const q = source.chunk_id ? `?chunk_id=${encodeURIComponent(source.chunk_id)}` : "";
    const doc = await api(`/v1/documents/${encodeURIComponent(source.knowledge_id)}${q}`);
    $("#doc-title").textContent = doc.title;
    const meta = [doc.collection, doc.knowledge_type, doc.equipment_id, doc.event_date, doc.source_path]
      .filter(Boolean)
      .join(" · ");
    $("#doc-meta").textContent = meta;
    const pre = $("#doc-text");
    pre.replaceChildren();
    const h = doc.highlight;
    if (h) {
      const where = [h.heading_path.join(" › "), h.page ? `p. ${h.page}` : ""].filter(Boolean).join(", ");
      pre.append(
        doc.text.slice(0, h.char_start),
        el("mark", { id: "highlight", title: `${source.anchor}: ${where}` }, doc.text.slice(h.char_start, h.char_end)),
        doc.text.slice(h.char_end),
      );
    } else {
      pre.textContent = doc.text;
    }
    $("#doc-viewer").hidden = false;
    document.body.classList.add("modal-open");
    const mark = $("#highlight");
    if (mark) mark.scrollIntoView({ block: "center" });
    $("#doc-close").focus();
  } catch (err) {
    showError(`Cannot open the document: ${err.message}`);
  }
}

function closeDocument() {
  $("#doc-viewer").hidden = true;
  document.body.classList.remove("modal-open");
}

document.addEventListener("DOMContentLoaded", init);
