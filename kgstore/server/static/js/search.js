// The Search view: one box; "Entities" searches the entity index by meaning
// (/search?kind=entities), "Link a question" finds the entities a question mentions (/link).
"use strict";
window.kgstore = window.kgstore || {};
(function (kg) {
  const K = 10;

  // Both endpoints' rows as {iri, label, description, score}.
  const rowsOf = {
    entities: (hits) => firstPerEntity(hits).map((h) => ({
      iri: h.iri, label: h.label, score: h.score,
      description: (h.extra && h.extra.description) || descriptionFromText(h.text, h.label),
    })),
    link: (candidates) => candidates.map((c) => ({
      iri: c.iri, label: c.label, score: c.score, description: c.description,
      note: c.mention ? `“${c.mention}”, ${c.match}` : c.match,
    })),
  };

  // The index holds an entity's label and each alias: keep its best hit only.
  function firstPerEntity(hits) {
    const seen = new Set();
    return hits.filter((h) => !seen.has(h.iri) && seen.add(h.iri));
  }

  // An entity hit's text is "label: description" or "label (description)" or the label.
  function descriptionFromText(text, label) {
    if (!text || text === label) return "";
    let rest = text.startsWith(label) ? text.slice(label.length) : text;
    return rest.replace(/^[\s:;,\-–—(]+/, "").replace(/\)$/, "").trim();
  }

  async function run(event) {
    event.preventDefault();
    const text = document.getElementById("search-text").value.trim();
    const mode = document.getElementById("search-mode").value;
    const status = document.getElementById("search-status");
    const table = document.getElementById("search-results");
    if (!text) return;
    const url = mode === "link"
      ? `/link?k=${K}&q=${encodeURIComponent(text)}`
      : `/search?kind=entities&k=${K}&q=${encodeURIComponent(text)}`;
    status.textContent = "Searching…";
    table.hidden = true;
    let rows;
    try {
      rows = rowsOf[mode](await kg.api(url));
    } catch (err) {
      status.textContent = "";
      kg.notify(err.message);
      return;
    }
    kg.clearNotice();
    const body = table.tBodies[0];
    body.replaceChildren(...rows.map((r) => kg.el("tr", {},
      kg.el("td", {}, kg.entityLink(r.iri, r.label || kg.entityId(r.iri))),
      kg.el("td", {}, r.description || "", r.note ? kg.el("span", { class: "muted", text: ` (${r.note})` }) : null),
      kg.el("td", { class: "mono" }, kg.entityId(r.iri)),
      kg.el("td", { class: "num" }, kg.formatScore(r.score)))));
    status.textContent = rows.length ? `${rows.length} result${rows.length === 1 ? "" : "s"}` : "Nothing found.";
    table.hidden = !rows.length;
  }

  kg.search = {
    init() { document.getElementById("search-form").addEventListener("submit", run); },
    show() { document.getElementById("search-text").focus(); },
  };
})(window.kgstore);
