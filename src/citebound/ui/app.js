// citebound web page: plain JS, no build step. Every text from the server is inserted with
// textContent or as DOM nodes built here (never innerHTML), so neither document text nor model
// output can inject markup: the Markdown renderer below builds elements itself.
"use strict";

const $ = (sel) => document.querySelector(sel);
const ui = {
  mode: "auto",
  step: null, // last StepResponse
  views: {}, // stage -> StageView
  selected: null, // stage whose view is shown
  result: null, // AnswerView
  question: null, // question of the shown result
  turns: [], // earlier turns of the conversation: {question, view}
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
  $("#new-chat").addEventListener("click", newConversation);
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
  archiveCurrentTurn();
  const last = ui.turns[ui.turns.length - 1];
  const fresh = Boolean(last) && startsNewTopic(question, last);
  if (fresh) forgetTurns();
  $("#topic-note").hidden = !fresh;
  ui.step = null;
  ui.views = {};
  ui.selected = null;
  ui.result = null;
  ui.question = question;
  $("#result").hidden = true;
  showError("");
  setBusy(true);
  try {
    if (ui.mode === "auto") {
      await askStreaming(question);
    } else {
      const body = { question, to_end: false, history: historyTurns() };
      const collection = $("#collection").value;
      if (collection) body.collection = collection;
      accept(await api("/v1/steps", { method: "POST", body }));
    }
    $("#question").value = "";
  } catch (err) {
    showError(err.message);
  } finally {
    setBusy(false);
  }
}

// --- the conversation ------------------------------------------------------------------------

function historyTurns() {
  return ui.turns.map((t) => ({ question: t.question, answer: t.view.response.answer }));
}

// The shown answer becomes an earlier turn when the next question is asked.
function archiveCurrentTurn() {
  if (!ui.result || !ui.question) return;
  const turn = { question: ui.question, view: ui.result };
  ui.turns.push(turn);
  $("#turns").append(turnNode(turn));
  $("#conversation").hidden = false;
}

// A question that shares no word with the last turn (its question and answer) and has no
// reference word ("it", "them", "what about ...") starts a new conversation: an unrelated
// question is not read as a follow-up, and the old turns are not sent as its context.
const REFERENCE = /^(?:and|also|then|so|what about|how about)\b|\b(?:it|its|itself|they|them|their|theirs|this|that|these|those|there|he|him|his|she|her|same|former|latter)\b/i;
const STOP = new Set(("the and for are was were has have had does did doing can could should would will shall may might must " +
  "what which who whom whose when where why how much many any all each some such than then that this with from into onto " +
  "about above below over under after before between during without within not nor but our your you they them its is be been " +
  "being use used uses using get got make made kind type often long ever also just only very more most less least").split(" "));

function topicWords(text) {
  const out = new Set();
  for (const raw of (text || "").toLowerCase().replace(/\[(?:c|s)?\d+\]/g, " ").split(/[^\p{L}\p{N}-]+/u)) {
    const w = raw.replace(/^-+|-+$/g, "");
    if (!w || STOP.has(w) || (w.length < 3 && !/\d/.test(w))) continue;
    out.add(w.length > 4 ? w.replace(/(?:ing|ed|es|s)$/, "") : w);
  }
  return out;
}

function startsNewTopic(question, turn) {
  if (REFERENCE.test(question)) return false;
  const before = topicWords(`${turn.question} ${turn.view.response.answer || ""}`);
  for (const w of topicWords(question)) if (before.has(w)) return false;
  return true;
}

function forgetTurns() {
  ui.turns = [];
  $("#turns").replaceChildren();
  $("#conversation").hidden = true;
}

function newConversation() {
  forgetTurns();
  ui.result = null;
  ui.question = null;
  $("#topic-note").hidden = true;
  $("#result").hidden = true;
  $("#pipeline").hidden = true;
  showError("");
  $("#question").focus();
}

function turnNode(turn) {
  const r = turn.view.response;
  const [label, cls] = STATUS[r.status] || [r.status, ""];
  const answer = el("div", { class: `turn-answer md ${cls}` });
  if (r.status === "OK") answer.append(...renderMarkdown(r.answer, turn.view.sources));
  else if (r.status === "NO_EVIDENCE") answer.append(el("p", { class: "refusal-text", text: r.answer }));
  else answer.append(el("p", { text: `No answer: ${r.failure_reason || "failed"}` }));
  const sources = turn.view.sources.map((s) =>
    el("button", { type: "button", class: `chip ${s.confidence}`, text: s.anchor, title: s.source_reference, "data-anchor": s.anchor, onclick: () => openDocument(s) }),
  );
  return el(
    "li",
    { class: "turn" },
    el("div", { class: "turn-q" }, el("span", { class: "who", text: "You" }), el("p", { text: turn.question })),
    el(
      "div",
      { class: "turn-a" },
      el("span", { class: `badge ${cls}`, text: label }),
      answer,
      sources.length ? el("div", { class: "turn-sources" }, el("span", { class: "muted small", text: "Sources: " }), sources) : null,
    ),
  );
}

// Auto mode: the answer streams in from the OpenAI-compatible endpoint (the whole conversation
// in `messages`); the last event carries the answer view and what each stage did.
async function askStreaming(question) {
  const messages = [];
  for (const t of ui.turns) {
    messages.push({ role: "user", content: t.question });
    messages.push({ role: "assistant", content: t.view.response.answer });
  }
  messages.push({ role: "user", content: question });
  const options = { view: true };
  const collection = $("#collection").value;
  if (collection) options.collection = collection;
  const headers = { Accept: "text/event-stream", "Content-Type": "application/json" };
  const key = localStorage.getItem("citebound.key");
  if (key) headers.Authorization = `Bearer ${key}`;
  const resp = await fetch("/v1/chat/completions", {
    method: "POST",
    headers,
    body: JSON.stringify({ model: "citebound", messages, stream: true, citebound: options }),
  });
  if (!resp.ok) {
    let data = null;
    try {
      data = await resp.json();
    } catch (_) {
      data = null;
    }
    const err = new Error((data && data.error && data.error.message) || `HTTP ${resp.status}`);
    err.status = resp.status;
    throw err;
  }
  startStreamingView(question);
  const answer = $("#answer");
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let text = "";
  let result = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      if (!frame.startsWith("data: ")) continue;
      const data = frame.slice(6);
      if (data === "[DONE]") continue;
      const event = JSON.parse(data);
      const delta = event.choices && event.choices[0] ? event.choices[0].delta : null;
      if (delta && delta.content) {
        text += delta.content;
        answer.textContent = text;
      }
      if (event.citebound) result = event.citebound;
    }
  }
  if (!result || !result.view) throw new Error("the answer stream ended early");
  const stages = result.stages || [];
  accept({
    state: null,
    state_token: null,
    stage: stages.length ? stages[stages.length - 1].stage : null,
    next_stage: null,
    stage_order: stages.map((v) => v.stage),
    labels: Object.fromEntries(stages.map((v) => [v.stage, v.label])),
    views: stages,
    result: result.view,
  });
}

function startStreamingView(question) {
  $("#current-question").textContent = question;
  const badge = $("#status-badge");
  badge.textContent = "Answering…";
  badge.className = "badge";
  $("#confidence").replaceChildren();
  const answer = $("#answer");
  answer.replaceChildren();
  answer.className = "answer streaming";
  $("#answer-meta").textContent = "";
  $("#sources").replaceChildren();
  $("#sources-empty").hidden = true;
  for (const b of document.querySelectorAll("#feedback button")) b.disabled = true;
  $("#result").hidden = false;
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
  $("#current-question").textContent = ui.question || "";
  const answer = $("#answer");
  answer.replaceChildren();
  answer.className = `answer md ${cls}`;
  if (r.status === "OK") {
    answer.append(...renderMarkdown(r.answer, view.sources));
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
            s.page ? el("span", { class: "page", text: `${/\.pptx$/i.test(s.source_path || "") ? "slide" : "page"} ${s.page}` }) : null,
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

// --- safe Markdown ---------------------------------------------------------------------------
// A small subset (paragraphs, line breaks, headings, lists, code fences, `code`, **bold**,
// *italic*) rendered as DOM nodes built here. Raw HTML in an answer stays visible text; links
// are not followed (a model could invent them); citation markers become chips.

const INLINE = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(\*[^*\s][^*\n]*\*)|(\[[^\]\s]{1,12}\])/g;

function inlineNodes(text, byAnchor) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.push(document.createTextNode(text.slice(last, m.index)));
    const tok = m[0];
    if (m[1]) out.push(el("code", { text: tok.slice(1, -1) }));
    else if (m[2]) out.push(el("strong", {}, ...inlineNodes(tok.slice(2, -2), byAnchor)));
    else if (m[3]) out.push(el("em", {}, ...inlineNodes(tok.slice(1, -1), byAnchor)));
    else {
      const src = byAnchor[tok.slice(1, -1)];
      out.push(
        src
          ? el("button", {
              type: "button",
              class: `chip ${src.confidence}`,
              text: src.anchor,
              title: src.source_reference,
              "data-anchor": src.anchor,
              onclick: () => openDocument(src),
            })
          : document.createTextNode(tok),
      );
    }
    last = m.index + tok.length;
  }
  if (last < text.length) out.push(document.createTextNode(text.slice(last)));
  return out;
}

function renderMarkdown(text, sources) {
  const byAnchor = Object.fromEntries((sources || []).map((s) => [s.anchor, s]));
  const blocks = [];
  let para = [];
  let list = null;
  const flush = () => {
    if (para.length) {
      const p = el("p");
      para.forEach((line, i) => {
        if (i) p.append(el("br"));
        p.append(...inlineNodes(line, byAnchor));
      });
      blocks.push(p);
      para = [];
    }
    list = null;
  };
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith("```")) {
      flush();
      const code = [];
      for (i++; i < lines.length && !lines[i].startsWith("```"); i++) code.push(lines[i]);
      blocks.push(el("pre", {}, el("code", { text: code.join("\n") })));
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const bullet = /^\s*[-*+]\s+(.*)$/.exec(line);
    const numbered = /^\s*\d+[.)]\s+(.*)$/.exec(line);
    if (!line.trim()) {
      flush();
    } else if (heading) {
      flush();
      blocks.push(el("h4", { class: "md-h" }, ...inlineNodes(heading[2], byAnchor)));
    } else if (bullet || numbered) {
      const tag = bullet ? "ul" : "ol";
      if (para.length) flush();
      if (!list || list.tagName.toLowerCase() !== tag) {
        list = el(tag);
        blocks.push(list);
      }
      list.append(el("li", {}, ...inlineNodes((bullet || numbered)[1], byAnchor)));
    } else {
      if (list) list = null;
      para.push(line);
    }
  }
  flush();
  return blocks;
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
