// The Ask view: a question, a method (the server's list, /ask/methods), then the answer or
// the refusal with its reason, the executed query, and the evidence as a table and a graph.
// An open answer ("Tell me about X") is a paragraph whose footnotes ([1]) mark the fact
// they cite in the table (its rows) and in the graph (its edges). From several stores,
// each evidence row says its store.
// The server answers one question at a time: while ours waits or runs, /ask/queue (asked
// with our ticket) says which, and how many go first.
"use strict";
window.kgstore = window.kgstore || {};
(function (kg) {
  const POLL_MS = 500;
  let methods = [];
  let busy = false;

  const $ = (id) => document.getElementById(id);

  function newTicket() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    return Math.random().toString(36).slice(2) + Date.now().toString(36);  // not a secure context
  }

  async function loadMethods() {
    const doc = await kg.api("/ask/methods");
    methods = doc.methods;
    $("ask-method").replaceChildren(...methods.map((m) => kg.el("option",
      { value: m.name, selected: m.name === doc.default, title: m.description }, m.name)));
    describeMethod();
  }

  function describeMethod() {
    const chosen = methods.find((m) => m.name === $("ask-method").value);
    $("ask-method-help").textContent = chosen ? `${chosen.name}: ${chosen.description}` : "";
  }

  // -- progress ------------------------------------------------------------------------------
  function showProgress(text) {
    $("ask-progress").hidden = false;
    $("ask-progress-text").textContent = text;
  }

  function progressText(queue, started) {
    const waited = Math.round((Date.now() - started) / 1000);
    if (queue.state === "waiting") {
      const ahead = queue.ahead;
      return `Waiting for the model: ${ahead} question${ahead === 1 ? "" : "s"} ahead of yours (${waited} s)…`;
    }
    if (queue.state === "running") return `The model is working on your question… ${waited} s`;
    return `Sending the question… ${waited} s`;
  }

  function watchQueue(ticket, started) {
    let stopped = false;
    const tick = async () => {
      if (stopped) return;
      try {
        const queue = await kg.api(`/ask/queue?ticket=${encodeURIComponent(ticket)}`);
        if (!stopped) {
          showProgress(progressText(queue, started));
          $("ask-progress").dataset.state = queue.state;
        }
      } catch (err) { /* the answer's own request reports errors */ }
      if (!stopped) setTimeout(tick, POLL_MS);
    };
    tick();
    return () => { stopped = true; };
  }

  // -- the answer ---------------------------------------------------------------------------
  function answerBox(doc) {
    const box = $("ask-answer");
    if (doc.refused) {
      box.className = "answer refused";
      box.replaceChildren(
        kg.el("div", { class: "label", text: "No answer" }),
        kg.el("div", { class: "value" }, doc.refusal.message),
        kg.el("div", { class: "muted small", text: `reason: ${doc.refusal.reason}` }));
    } else if (doc.text != null) {
      box.className = "answer open";
      box.replaceChildren(kg.el("div", { class: "label", text: "Answer, from the store facts cited" }),
        kg.el("div", { class: "value" }, paragraph(doc)));
    } else {
      box.className = "answer";
      const answers = doc.answers.map((label, i) => kg.el("span", {},
        doc.answer_iris[i] ? kg.entityLink(doc.answer_iris[i], label) : kg.el("span", { text: label }),
        doc.answer_stores && doc.answer_stores[i] ? kg.el("span", { class: "muted small",
          text: ` (${doc.answer_stores[i].join(", ")})` }) : null));
      box.replaceChildren(
        kg.el("div", { class: "label", text: doc.parametric ? "Answer (from the model's own knowledge, not the store)" : "Answer" }),
        kg.el("div", { class: "value" }, answers.flatMap((a, i) => (i ? [", ", a] : [a]))));
    }
  }

  // The sentences, each followed by a footnote for each fact it cites.
  function paragraph(doc) {
    const facts = new Map(doc.facts.map((f) => [f.n, f]));
    return doc.sentences.flatMap((s, i) => [
      i ? " " : null,
      kg.el("span", { class: `sentence ${s.status}`, text: s.text.replace(/\.$/, "") }),
      ...s.facts.map((n) => kg.el("a", { class: "cite", href: `#ask-fact-${n}`, "data-fact": n, text: `[${n}]`,
        title: facts.has(n) ? factLine(facts.get(n)) : "", onclick: (event) => { event.preventDefault(); cite(n); } })),
      "."]);
  }

  function factLine(f) {
    return `${f.subject} | ${f.relation} | ${f.values.join("; ")}` + (f.stores ? ` (${f.stores.join(", ")})` : "");
  }

  // The evidence triples, each with the number of the fact it backs (an open answer).
  function evidenceOf(doc) {
    if (doc.text == null) return doc.evidence;
    return doc.facts.flatMap((f) => f.evidence.map((e) => ({ ...e, fact: f.n })));
  }

  // Footnote ``n``: its rows and its edges stand out, and the table scrolls to them.
  function cite(n) {
    for (const row of $("ask-evidence").tBodies[0].rows) row.classList.toggle("cited", row.dataset.fact === String(n));
    const first = document.getElementById(`ask-fact-${n}`);
    if (first) first.scrollIntoView({ block: "nearest" });
    if (kg.ask.graph) {
      kg.ask.graph.edges().removeClass("cited");
      kg.ask.graph.edges(`[fact = ${n}]`).addClass("cited");
    }
  }

  function renderAnswer(doc) {
    answerBox(doc);
    $("ask-query-box").hidden = !doc.query;
    $("ask-query").textContent = kg.prefixedQuery(doc.query) || "";  // the store's prefixes, as people write it
    const evidence = evidenceOf(doc);
    const table = $("ask-evidence");
    table.classList.toggle("open", doc.text != null);
    table.classList.toggle("several", evidence.some((e) => e.store));
    const seen = new Set();
    table.tBodies[0].replaceChildren(...evidence.map((e) => {
      const first = e.fact && !seen.has(e.fact);
      if (e.fact) seen.add(e.fact);
      return kg.el("tr", { id: first ? `ask-fact-${e.fact}` : null, "data-fact": e.fact || null },
        kg.el("td", {}, kg.entityLink(e.s, e.s_label)),
        kg.el("td", { title: e.p }, e.p_label || kg.shorten(e.p)),
        kg.el("td", {}, e.literal ? kg.literalText(e.o, e.datatype) : kg.entityLink(e.o, e.o_label)),
        kg.el("td", { class: "num" }, kg.formatScore(e.score)),
        kg.el("td", { class: "col-fact", text: e.fact ? `[${e.fact}]` : "" }),
        kg.el("td", { class: "col-store", text: e.store || "" }));
    }));
    if (!evidence.length) {
      table.tBodies[0].replaceChildren(kg.el("tr", {}, kg.el("td", { colspan: 6, class: "muted" }, "No evidence.")));
    }
    $("ask-result").hidden = false;
    $("ask-graph").hidden = !evidence.length;
    // an open answer's subject stands out as an answer does
    const marked = doc.text != null ? doc.facts.map((f) => f.evidence.length ? f.evidence[0].s : null) : doc.answer_iris;
    kg.ask.graph = kg.graph.draw($("ask-graph"), evidence, marked);
    $("ask-meta").textContent = `${doc.method} · ${doc.seconds} s · ${doc.tokens.calls} model call` +
      `${doc.tokens.calls === 1 ? "" : "s"}, ${doc.tokens.total} tokens`;
  }

  async function ask(event) {
    event.preventDefault();
    if (busy) return;
    const question = $("ask-question").value.trim();
    if (!question) return;
    busy = true;
    $("ask-submit").disabled = true;
    $("ask-result").hidden = true;
    kg.clearNotice();
    const ticket = newTicket();
    const started = Date.now();
    showProgress("Sending the question…");
    const stop = watchQueue(ticket, started);
    try {
      const doc = await kg.postJSON("/ask", { question, method: $("ask-method").value, ticket });
      renderAnswer(doc);
    } catch (err) {
      kg.notify(err.message);
    } finally {
      stop();
      busy = false;
      $("ask-submit").disabled = false;
      $("ask-progress").hidden = true;
    }
  }

  kg.ask = {
    graph: null,  // the cytoscape instance of the last answer (tests read it)
    cite,  // mark footnote n's fact in the table and the graph
    init() {
      $("ask-form").addEventListener("submit", ask);
      $("ask-method").addEventListener("change", describeMethod);
      $("ask-open-query").addEventListener("click", () => kg.sparql.open($("ask-query").textContent));
    },
    async show() {
      if (!methods.length) {
        try { await loadMethods(); } catch (err) { kg.notify(err.message); }
      }
      $("ask-question").focus();
    },
  };
})(window.kgstore);
