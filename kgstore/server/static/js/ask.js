// The Ask view: a question, a method (the server's list, /ask/methods), then the answer or
// the refusal with its reason, the executed query, and the evidence as a table and a graph.
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
  function renderAnswer(doc) {
    const box = $("ask-answer");
    if (doc.refused) {
      box.className = "answer refused";
      box.replaceChildren(
        kg.el("div", { class: "label", text: "No answer" }),
        kg.el("div", { class: "value" }, doc.refusal.message),
        kg.el("div", { class: "muted small", text: `reason: ${doc.refusal.reason}` }));
    } else {
      box.className = "answer";
      const answers = doc.answers.map((label, i) => doc.answer_iris[i]
        ? kg.entityLink(doc.answer_iris[i], label) : kg.el("span", { text: label }));
      box.replaceChildren(
        kg.el("div", { class: "label", text: doc.parametric ? "Answer (from the model's own knowledge, not the store)" : "Answer" }),
        kg.el("div", { class: "value" }, answers.flatMap((a, i) => (i ? [", ", a] : [a]))));
    }
    $("ask-query-box").hidden = !doc.query;
    $("ask-query").textContent = kg.prefixedQuery(doc.query) || "";  // the store's prefixes, as people write it
    $("ask-evidence").tBodies[0].replaceChildren(...doc.evidence.map((e) => kg.el("tr", {},
      kg.el("td", {}, kg.entityLink(e.s, e.s_label)),
      kg.el("td", { title: e.p }, e.p_label || kg.shorten(e.p)),
      kg.el("td", {}, e.literal ? kg.literalText(e.o, e.datatype) : kg.entityLink(e.o, e.o_label)),
      kg.el("td", { class: "num" }, kg.formatScore(e.score)))));
    if (!doc.evidence.length) {
      $("ask-evidence").tBodies[0].replaceChildren(kg.el("tr", {}, kg.el("td", { colspan: 4, class: "muted" }, "No evidence.")));
    }
    $("ask-result").hidden = false;
    $("ask-graph").hidden = !doc.evidence.length;
    kg.ask.graph = kg.graph.draw($("ask-graph"), doc.evidence, doc.answer_iris);
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
