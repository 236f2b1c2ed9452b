"""Everything a store holds, read into sets, so that two stores can be compared: the
triples, the catalog's rows, the property graph's nodes and edges and the index's
(kind, text) entries. Used by the tests of `kgstore update` (an updated store must
equal a fresh load of the newer data)."""
from __future__ import annotations

from dataclasses import dataclass, field

from kgstore import Store
from kgstore.graph import open_graph

ENTITY_COLUMNS = "iri, id, label, description, list_sort(aliases), sitelinks, popularity, is_mediator, kind"
RELATION_COLUMNS = "iri, id, label, description, inverse_label, datatype, is_mediator_type, usage"
FACT_COLUMNS = "s, p, o, o_literal, datatype, lang"


@dataclass
class StoreState:
    triples: set = field(default_factory=set)
    entities: set = field(default_factory=set)
    relations: set = field(default_factory=set)
    facts: set = field(default_factory=set)
    graph_nodes: set = field(default_factory=set)
    graph_edges: set = field(default_factory=set)
    index: set = field(default_factory=set)

    def differences(self, other: "StoreState", show: int = 5) -> dict:
        """Per part, a few items only one side holds (empty when equal)."""
        out = {}
        for name in self.__dataclass_fields__:
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine != theirs:
                out[name] = {"only_here": sorted(map(str, mine - theirs))[:show],
                             "only_there": sorted(map(str, theirs - mine))[:show],
                             "counts": (len(mine), len(theirs))}
        return out


def store_state(path, *, graph: bool = True, index: bool = True) -> StoreState:
    state = StoreState()
    with Store.open(path, read_only=True) as store:
        state.triples = {str(q) for q in store.rdf.quads_for_pattern(None, None, None)}
        with store.catalog.connect() as con:
            state.entities = {tuple(_hashable(v) for v in r)
                              for r in con.execute(f"SELECT {ENTITY_COLUMNS} FROM entities").fetchall()}
            state.relations = set(con.execute(f"SELECT {RELATION_COLUMNS} FROM relations").fetchall())
            state.facts = set(con.execute(f"SELECT {FACT_COLUMNS} FROM statements").fetchall())
            if index:
                state.index = set(con.execute(
                    "SELECT kind, text FROM index_items WHERE NOT deleted").fetchall())
        if graph:
            with open_graph(store) as g:
                state.graph_nodes = {tuple(_hashable(v) for v in r.values()) for r in g.query(
                    "MATCH (n:Entity) RETURN n.iri, n.id, n.label, n.description, n.popularity, n.is_mediator")}
                state.graph_nodes |= {tuple(r.values()) for r in g.query(
                    "MATCH (n:Literal) RETURN n.key, n.value, n.datatype, n.lang")}
                state.graph_edges = {tuple(r.values()) for r in g.query(
                    "MATCH (a)-[r]->(b) RETURN a.iri, r.iri, r.label, b.iri, b.key")}
    return state


def _hashable(value):
    return tuple(value) if isinstance(value, list) else value
