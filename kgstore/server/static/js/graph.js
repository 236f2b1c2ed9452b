// The evidence of an answer as a small graph (cytoscape.js, vendored): entities and values
// as nodes, facts as labelled edges; the answers stand out; a click on an entity opens its page.
"use strict";
window.kgstore = window.kgstore || {};
(function (kg) {
  const STYLE = [
    { selector: "node", style: {
      "label": "data(label)", "font-size": 11, "color": "#1f2937", "text-valign": "bottom", "text-margin-y": 4,
      "background-color": "#93c5fd", "border-width": 1, "border-color": "#2563eb", "width": 18, "height": 18,
      "text-wrap": "ellipsis", "text-max-width": 140 } },
    { selector: "node.literal", style: { "shape": "round-rectangle", "background-color": "#e5e7eb", "border-color": "#9ca3af" } },
    { selector: "node.answer", style: { "background-color": "#f59e0b", "border-color": "#b45309", "width": 24, "height": 24 } },
    { selector: "edge", style: {
      "label": "data(label)", "font-size": 9, "color": "#4b5563", "curve-style": "bezier", "width": 1.5,
      "line-color": "#9ca3af", "target-arrow-color": "#9ca3af", "target-arrow-shape": "triangle",
      "text-rotation": "autorotate", "text-background-color": "#ffffff", "text-background-opacity": 0.8,
      "text-background-padding": 1 } },
    { selector: "edge.cited", style: { "line-color": "#f59e0b", "target-arrow-color": "#f59e0b", "width": 3.5 } },
  ];

  function elementsOf(evidence, answerIris) {
    const nodes = new Map(), edges = [];
    const node = (id, label, literal) => {
      if (!nodes.has(id)) {
        const classes = [literal ? "literal" : "entity", answerIris.has(id) ? "answer" : ""].join(" ").trim();
        nodes.set(id, { data: { id, label: label || kg.entityId(id), iri: literal ? null : id }, classes });
      }
      return id;
    };
    evidence.forEach((e, i) => {
      const s = node(e.s, e.s_label, false);
      const o = node(e.literal ? `literal:${i}:${e.o}` : e.o, e.literal ? e.o : e.o_label, e.literal);
      // an open answer's facts carry their number, so a footnote can mark its edges
      const label = (e.fact ? `[${e.fact}] ` : "") + (e.p_label || kg.shorten(e.p));
      edges.push({ data: { id: `e${i}`, source: s, target: o, label, fact: e.fact || 0 } });
    });
    return [...nodes.values(), ...edges];
  }

  kg.graph = {
    // Draw ``evidence`` in ``container``; the cytoscape instance, or null without evidence.
    draw(container, evidence, answerIris) {
      container.replaceChildren();
      if (!evidence.length || !window.cytoscape) return null;
      const cy = window.cytoscape({
        container, elements: elementsOf(evidence, new Set(answerIris.filter(Boolean))), style: STYLE,
        layout: { name: "cose", animate: false, padding: 24, nodeRepulsion: 40000, idealEdgeLength: 110,
          nodeDimensionsIncludeLabels: true, randomize: false },
        wheelSensitivity: 0.3, minZoom: 0.3, maxZoom: 3,
      });
      cy.on("tap", "node", (event) => {
        const iri = event.target.data("iri");
        if (iri) kg.route(kg.entityHref(iri));
      });
      return cy;
    },
  };
})(window.kgstore);
