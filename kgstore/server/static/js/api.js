// The page's talk with its server: the token, JSON requests, the notice line, and the
// small helpers every view uses (escaping, entity links). Everything goes to this same
// origin: the page never asks anything of another host.
"use strict";
window.kgstore = window.kgstore || {};
(function (kg) {
  const TOKEN_KEY = "kgstore-token";
  const WIKIDATA_ENTITY = "http://www.wikidata.org/entity/";

  kg.prefixes = {};

  kg.token = () => sessionStorage.getItem(TOKEN_KEY);
  kg.setToken = (token) => token ? sessionStorage.setItem(TOKEN_KEY, token) : sessionStorage.removeItem(TOKEN_KEY);
  kg.authHeaders = () => (kg.token() ? { Authorization: "Bearer " + kg.token() } : {});

  class ApiError extends Error {
    constructor(message, status) { super(message); this.status = status; }
  }
  kg.ApiError = ApiError;

  // fetch() a data endpoint with the token; the parsed JSON, or an ApiError whose message
  // is the server's own (its JSON "error", or its text). A 401 also asks for the token.
  kg.api = async function (path, options = {}) {
    const headers = Object.assign({ Accept: "application/json" }, options.headers || {}, kg.authHeaders());
    let response;
    try {
      response = await fetch(path, Object.assign({}, options, { headers }));
    } catch (err) {
      throw new ApiError("The server does not answer (is `kgstore serve` still running?)", 0);
    }
    const text = await response.text();
    let doc = null;
    try { doc = text ? JSON.parse(text) : null; } catch (err) { doc = null; }
    if (response.status === 401) {
      kg.tokenRefused();
      throw new ApiError(kg.token() ? "The server refused the token." : "This server needs a token.", 401);
    }
    if (!response.ok) {
      const message = (doc && doc.error) || text.trim() || response.statusText;
      throw new ApiError(message, response.status);
    }
    return doc;
  };

  kg.postJSON = (path, body) => kg.api(path, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });

  // -- the notice line under the header ------------------------------------------------------
  kg.notify = function (message, kind = "error") {
    const el = document.getElementById("notice");
    el.textContent = message;
    el.className = "notice " + kind;
    el.hidden = !message;
  };
  kg.clearNotice = () => kg.notify("");

  // -- the token -------------------------------------------------------------------------
  kg.tokenRefused = function () {
    const had = Boolean(kg.token());
    kg.notify(had
      ? "Wrong token: the server refused it (401 Unauthorized). Enter the token given to `kgstore serve --token`."
      : "This server needs a token (it was started with --token). Enter it to read the store.", "error");
    kg.askForToken(had ? "The token you gave was refused. Enter the token this server was started with."
      : "This server was started with --token: enter that token to read the store.");
  };

  kg.askForToken = function (reason) {
    const dialog = document.getElementById("token-dialog");
    document.getElementById("token-reason").textContent = reason;
    document.getElementById("token-button").hidden = false;
    if (!dialog.open) dialog.showModal();
  };

  // -- helpers ---------------------------------------------------------------------------
  kg.el = function (tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "text") node.textContent = value;
      else if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  };

  // The shortest prefixed name of an IRI with the store's prefixes, or the IRI itself.
  kg.shorten = function (iri) {
    let best = "", name = "";
    for (const [prefix, ns] of Object.entries(kg.prefixes)) {
      if (iri.startsWith(ns) && ns.length > best.length) { best = ns; name = prefix; }
    }
    const rest = iri.slice(best.length);
    return best && /^[A-Za-z0-9_.\-]*$/.test(rest) ? name + ":" + rest : iri;
  };

  // A query as people read it: each IRI of the store's namespaces written as a prefixed
  // name (<http://www.wikidata.org/entity/Q5451> as wd:Q5451). It runs as it is, the
  // prefixes being predeclared. Strings and comments are left alone, and so are the
  // prefixes the query declares itself and the names SPARQL could not read back.
  const QUERY_TOKENS = /("""[\s\S]*?"""|'''[\s\S]*?'''|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|#[^\n]*)|<([^<>"{}|^`\\\s]*)>/g;
  const PREFIX_DECLARATION = /\bPREFIX\s+([A-Za-z][\w.-]*)?\s*:/gi;
  const PLAIN_LOCAL = /^[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?$/;
  kg.prefixedQuery = function (query) {
    if (!query) return query;
    const declared = new Set(Array.from(query.matchAll(PREFIX_DECLARATION), (m) => m[1] || ""));
    const namespaces = Object.entries(kg.prefixes).filter(([prefix]) => !declared.has(prefix))
      .sort((a, b) => b[1].length - a[1].length);  // the longest namespace first: wdt: before p:
    return query.replace(QUERY_TOKENS, (token, kept, iri) => {
      if (kept !== undefined) return token;
      const found = namespaces.find(([, ns]) => iri.startsWith(ns));
      const local = found ? iri.slice(found[1].length) : "";
      return found && PLAIN_LOCAL.test(local) ? `${found[0]}:${local}` : token;
    });
  };

  // A literal as people read it: a date (xsd:dateTime, xsd:date) at its precision,
  // 1952-03-11 rather than 1952-03-11T00:00:00Z, a time other than midnight kept; anything
  // else as it is. The page's copy of kgstore.literal_text (Python), which the CLI tables use.
  const XSD = "http://www.w3.org/2001/XMLSchema#";
  const DATE_TYPES = new Set(["dateTime", "date", "dateTimeStamp"].map((t) => XSD + t));
  const ISO_DATE = /^([+-]?\d+-\d\d-\d\d)(?:T(\d\d:\d\d:\d\d)(?:\.\d+)?)?(Z|[+-]\d\d:\d\d)?$/;
  kg.literalText = function (value, datatype) {
    const m = DATE_TYPES.has(datatype) ? ISO_DATE.exec(String(value).trim()) : null;
    if (!m) return value;
    let text = m[1].replace(/^\+/, "");
    if (m[2] && m[2] !== "00:00:00") text += ` ${m[2]}${m[3] === "Z" ? " UTC" : ""}`;
    return text;
  };

  // The id shown for an entity: Q42 for Wikidata entities, a prefixed name otherwise.
  kg.entityId = function (iri) {
    if (iri && iri.startsWith(WIKIDATA_ENTITY)) return iri.slice(WIKIDATA_ENTITY.length);
    return iri ? kg.shorten(iri) : "";
  };

  // The page of an entity: /ui/entity/Q42, or /ui/entity/<the IRI, escaped>.
  kg.entityHref = function (iri) {
    const id = kg.entityId(iri);
    return "/ui/entity/" + encodeURIComponent(/^[QPL]\d+$/.test(id) ? id : iri);
  };

  kg.entityLink = (iri, label) => kg.el("a", { href: kg.entityHref(iri), class: "entity-link", title: iri },
    label || kg.entityId(iri));

  kg.formatScore = (score) => (typeof score === "number" ? score.toFixed(3) : "");
})(window.kgstore);
