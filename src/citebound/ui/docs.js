// Offline API reference: renders the server's own /openapi.json with no third-party code, so
// /docs works on a machine without internet access (Swagger UI loads from a CDN).
"use strict";

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function refName(schema) {
  if (!schema) return "";
  if (schema.$ref) return schema.$ref.split("/").pop();
  if (schema.type === "array") return refName(schema.items) + "[]";
  if (schema.anyOf) return schema.anyOf.map(refName).join(" | ");
  return schema.type || "";
}

function operation(path, method, op, spec) {
  const box = el("details", { id: op.operationId || `${method}-${path}` });
  box.append(el("summary", {}, el("span", { class: `method ${method}` }, method.toUpperCase()),
    `${path}  `, el("span", {}, op.summary || "")));
  if (op.description) box.append(el("p", {}, op.description));
  const params = op.parameters || [];
  if (params.length) {
    const table = el("table", {}, el("tr", {}, el("th", {}, "parameter"), el("th", {}, "in"),
      el("th", {}, "type"), el("th", {}, "description")));
    for (const p of params) {
      table.append(el("tr", {}, el("td", {}, p.name + (p.required ? " *" : "")), el("td", {}, p.in),
        el("td", {}, refName(p.schema)), el("td", {}, p.description || "")));
    }
    box.append(table);
  }
  const body = op.requestBody && op.requestBody.content;
  if (body) {
    for (const [type, media] of Object.entries(body)) {
      box.append(el("p", {}, `Request body (${type}): ${refName(media.schema)}`));
    }
  }
  const responses = el("ul", {});
  for (const [code, r] of Object.entries(op.responses || {})) {
    const content = r.content || {};
    const types = Object.entries(content).map(([t, m]) => `${t} ${refName(m.schema)}`).join(", ");
    responses.append(el("li", {}, `${code} ${r.description || ""}${types ? " — " + types : ""}`));
  }
  box.append(el("p", {}, "Responses:"), responses);
  return box;
}

function render(spec) {
  const main = document.getElementById("api");
  main.replaceChildren(el("p", {}, `${spec.info.title} ${spec.info.version}: ${spec.info.description || ""}`));
  main.append(el("h2", {}, "Endpoints"));
  for (const [path, item] of Object.entries(spec.paths || {})) {
    for (const [method, op] of Object.entries(item)) main.append(operation(path, method, op, spec));
  }
  main.append(el("h2", {}, "Schemas"));
  for (const [name, schema] of Object.entries((spec.components || {}).schemas || {})) {
    const box = el("details", { id: `schema-${name}` }, el("summary", {}, name));
    box.append(el("pre", {}, JSON.stringify(schema, null, 2)));
    main.append(box);
  }
}

fetch("/openapi.json")
  .then((r) => { if (!r.ok) throw new Error(`HTTP ${r.status}`); return r.json(); })
  .then(render)
  .catch((err) => {
    document.getElementById("api").replaceChildren(el("p", {}, `Cannot load /openapi.json: ${err.message}`));
  });
