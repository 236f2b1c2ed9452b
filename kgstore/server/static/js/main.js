// The page's start and its views: the path says which (/ or /ui/sparql, /ui/search,
// /ui/ask, /ui/entity/ID); links inside the page change the path without a reload.
"use strict";
window.kgstore = window.kgstore || {};
(function (kg) {
  const VIEWS = ["sparql", "search", "ask", "entity"];

  function viewOf(path) {
    if (path.startsWith("/ui/entity/")) return { name: "entity", ref: decodeURIComponent(path.slice(11)) };
    const name = path.replace(/^\/ui\/?/, "").replace(/\/$/, "");
    return { name: VIEWS.includes(name) ? name : "sparql" };
  }

  function show() {
    const view = viewOf(window.location.pathname);
    for (const name of VIEWS) document.getElementById(`view-${name}`).hidden = name !== view.name;
    for (const tab of document.querySelectorAll(".tabs a")) {
      tab.classList.toggle("active", tab.dataset.view === view.name);
    }
    if (view.name !== "entity") document.title = "kgstore";
    if (view.name === "entity") kg.entity.show(view.ref);
    else kg[view.name].show();
  }

  // Go to ``path`` of this page (no reload).
  kg.route = function (path) {
    if (path !== window.location.pathname) window.history.pushState({}, "", path);
    show();
  };

  function followLinks(event) {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    const link = event.target.closest("a[href]");
    if (!link || link.target === "_blank") return;
    const url = new URL(link.href, window.location.href);
    if (url.origin !== window.location.origin) return;
    if (url.pathname === "/" || url.pathname.startsWith("/ui/")) {
      event.preventDefault();
      kg.route(url.pathname);
    }
  }

  function setUpToken() {
    const dialog = document.getElementById("token-dialog");
    document.getElementById("token-form").addEventListener("submit", () => {
      kg.setToken(document.getElementById("token-input").value.trim());
      document.getElementById("token-input").value = "";
      start();  // check the new token and load what needed it
    });
    document.getElementById("token-button").addEventListener("click", () =>
      kg.askForToken("Enter the token this server was started with (--token)."));
    dialog.addEventListener("cancel", () => {});
  }

  // What needs the token: the store's name and prefixes. A 401 here opens the token dialog.
  async function start() {
    try {
      const [stats, prefixes] = await Promise.all([kg.api("/stats"), kg.api("/prefixes")]);
      kg.prefixes = prefixes;
      kg.clearNotice();
      document.getElementById("store-name").textContent =
        `${stats.triples.toLocaleString()} triples · ${stats.entities.toLocaleString()} entities`;
      show();
    } catch (err) {
      if (err.status !== 401) kg.notify(err.message);
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    document.addEventListener("click", followLinks);
    window.addEventListener("popstate", show);
    kg.search.init();
    kg.ask.init();
    setUpToken();
    if (kg.token()) document.getElementById("token-button").hidden = false;
    start();
  });
})(window.kgstore);
