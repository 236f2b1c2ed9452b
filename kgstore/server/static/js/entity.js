// The entity page (/ui/entity/Q42): label, description, aliases, the facts it states and
// the facts that point at it, each entity a link to its own page; qualifiers where the
// store keeps Wikidata's full statements.
"use strict";
window.kgstore = window.kgstore || {};
(function (kg) {
  const INCOMING = 200;

  // An entity as a link to its page; a literal as people read it (a date at its precision).
  function valueCell(value, iri, datatype) {
    return iri ? kg.entityLink(iri, value) : kg.el("span", { class: "literal", title: value },
      kg.literalText(value, datatype));
  }

  function qualifierList(qualifiers) {
    if (!qualifiers || !qualifiers.length) return null;
    return kg.el("ul", { class: "qualifiers" }, qualifiers.map((q) => kg.el("li", {},
      kg.el("span", { class: "muted" }, q.relation + ": "), valueCell(q.value, q.value_iri, q.datatype))));
  }

  function factsTable(headers, rows, emptyText) {
    if (!rows.length) return kg.el("p", { class: "hint", text: emptyText });
    return kg.el("table", { class: "data facts" },
      kg.el("thead", {}, kg.el("tr", {}, headers.map((h) => kg.el("th", { text: h })))),
      kg.el("tbody", {}, rows));
  }

  function render(doc) {
    const outgoing = doc.facts.map((f) => kg.el("tr", {},
      kg.el("td", { title: f.relation_id }, f.relation),
      kg.el("td", {}, valueCell(f.value, f.value_iri, f.datatype), qualifierList(f.qualifiers))));
    const incoming = (doc.incoming_facts || []).map((f) => kg.el("tr", {},
      kg.el("td", {}, kg.entityLink(f.subject_iri, f.subject)),
      kg.el("td", { title: f.relation_iri }, f.relation)));
    const shownIn = incoming.length < doc.incoming ? ` (the first ${incoming.length} of ${doc.incoming})` : "";
    return [
      kg.el("div", { class: "entity-head" },
        kg.el("h2", { id: "entity-label" }, doc.label || kg.entityId(doc.iri)),
        kg.el("span", { class: "mono muted" }, doc.id || ""),
        kg.el("a", { class: "muted small", href: "#", title: "Open a query for this entity in the SPARQL editor",
          onclick: (e) => { e.preventDefault(); kg.sparql.open(`SELECT ?p ?o WHERE { <${doc.iri}> ?p ?o }\nLIMIT 200`); } },
        "query in SPARQL")),
      doc.description ? kg.el("p", { class: "description", text: doc.description }) : null,
      doc.aliases && doc.aliases.length ? kg.el("p", { class: "aliases" },
        kg.el("span", { class: "muted", text: "Also known as: " }), doc.aliases.join(" · ")) : null,
      kg.el("p", { class: "mono muted small", text: doc.iri }),
      kg.el("h3", { text: `Facts (${doc.facts.length})` }),
      factsTable(["Relation", "Value"], outgoing, "No facts with this entity as the subject."),
      kg.el("h3", { text: `Facts pointing here (${doc.incoming})${shownIn}` }),
      factsTable(["Subject", "Relation"], incoming, "No facts point at this entity."),
    ];
  }

  kg.entity = {
    async show(ref) {
      const box = document.getElementById("entity");
      box.replaceChildren(kg.el("p", { class: "hint", text: "Loading…" }));
      try {
        const doc = await kg.api(`/entity/${encodeURIComponent(ref)}?incoming=${INCOMING}&qualifiers=true`);
        kg.clearNotice();
        box.replaceChildren(...render(doc).filter(Boolean));
        document.title = `${doc.label || ref} · kgstore`;
      } catch (err) {
        box.replaceChildren(kg.el("p", { class: "hint" }, err.status === 404
          ? `No entity ${ref} in this store.` : err.message));
        if (err.status !== 404) kg.notify(err.message);
      }
    },
  };
})(window.kgstore);
