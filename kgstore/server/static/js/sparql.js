// The SPARQL view: YASGUI (vendored) against this server's /sparql, set up so that it never
// reaches the network: no prefix.cc or Linked Open Vocabularies autocompletion, no CORS
// proxy, no endpoint catalogue, no share links; the token goes with each query.
"use strict";
window.kgstore = window.kgstore || {};
(function (kg) {
  const DEFAULT_QUERY = [
    "# The store's prefixes (wd:, wdt:, rdfs:, ...) are predeclared: no PREFIX lines needed.",
    "# Ctrl-Enter runs the query.",
    "SELECT ?country ?name WHERE {",
    "  wd:Q5456 wdt:P17 ?country .",
    "  ?country rdfs:label ?name",
    "}",
    "LIMIT 100",
  ].join("\n");

  let yasgui = null;

  function configureDefaults(Yasgui) {
    // Yasgui merges a given config into its defaults (arrays element by element), so the
    // network-reaching parts are switched off on the defaults themselves.
    const yasqe = Yasgui.Yasqe.defaults;
    yasqe.autocompleters = ["variables"];  // "prefixes" asks prefix.cc, "property"/"class" ask LOV
    yasqe.prefixCcApi = null;
    yasqe.createShareableLink = null;
    yasqe.createShortLink = null;
    yasqe.persistenceId = null;
    yasqe.value = DEFAULT_QUERY;
    yasqe.editorHeight = "240px";
    Yasgui.defaults.endpointCatalogueOptions.getData = () => [];
    Yasgui.defaults.corsProxy = undefined;
    Yasgui.defaults.persistenceId = null;  // a stored tab would keep an old server's endpoint
    Yasgui.Yasr.defaults.persistenceId = null;
    Yasgui.Yasr.defaults.pluginOrder = ["table", "response"];  // table: CSV download; response: JSON
    Yasgui.Yasr.defaults.prefixes = () => kg.prefixes;

    // The editor's syntax check knows the store's prefixes, as the server does: a query
    // without PREFIX lines is not marked wrong. (The "sparql11" mode's start state holds
    // the prefixes a query declared; each editor gets its mode from this factory.)
    const CodeMirror = Object.getPrototypeOf(Yasgui.Yasqe);
    const sparqlMode = CodeMirror.modes.sparql11;
    CodeMirror.defineMode("sparql11", (config, modeConfig) => {
      const mode = sparqlMode(config, modeConfig);
      const startState = mode.startState;
      mode.startState = function (...args) {
        const state = startState.apply(this, args);
        Object.assign(state.prefixes, kg.prefixes);
        return state;
      };
      return mode;
    });

    // IRIs in the result table link to the entity page of this server, not to the IRI.
    Yasgui.Yasr.plugins.table.prototype.getUriLinkFromBinding = function (binding) {
      return kg.el("a", { class: "iri entity-link", href: kg.entityHref(binding.value), title: binding.value },
        kg.shorten(binding.value)).outerHTML;
    };
  }

  function init() {
    const Yasgui = window.Yasgui;
    configureDefaults(Yasgui);
    yasgui = new Yasgui(document.getElementById("yasgui"), {
      requestConfig: {
        endpoint: window.location.origin + "/sparql",
        method: "POST",
        headers: () => kg.authHeaders(),
      },
      copyEndpointOnNewTab: true,
      populateFromUrl: false,
      autofocus: false,
    });
    kg.sparql.yasgui = yasgui;
  }

  kg.sparql = {
    yasgui: null,
    // Called each time the view is shown: YASGUI starts on first use (its editor measures
    // itself, which it cannot do while hidden).
    show() {
      if (!yasgui) init();
      const yasqe = yasgui.getTab() && yasgui.getTab().getYasqe();
      if (yasqe) yasqe.refresh();
    },
    // Put ``query`` in the editor and run it (the Ask view's "Open in the SPARQL editor").
    open(query) {
      kg.route("/ui/sparql");
      const tab = yasgui.getTab();
      tab.setQuery(query);
      tab.getYasqe().query().catch(() => {});
    },
  };
})(window.kgstore);
