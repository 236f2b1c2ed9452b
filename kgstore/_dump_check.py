"""Does the engine hold what the dump holds? :func:`check_engine`, the only questions
`kgstore sync --from-dump` asks the endpoint.

* A sample of the dump's subjects, drawn from the facts the run put in the catalog
  (seeded, so a rerun asks the same): for each, one ASK that it has at least one of its
  dump triples, ``ASK { VALUES (?p ?o) { (<p> <o>) ... } <s> ?p ?o }`` over up to
  :data:`FACTS_PER_SUBJECT` of its facts with an IRI object (with only literal objects,
  ``VALUES ?p`` alone: engines write some literals back in their own form). A missing
  subject is an error (the caller raises :class:`kgstore.errors.EndpointMismatchError`).
* The engine's triple count, where it can count (a refusal or a timeout leaves it
  unknown), against the triples the dump gave: a difference is a warning, not an error.
  An engine holds more when it keeps other data in the graph, or labels that the dump's
  loader keeps in the catalog only (tsv); fewer when the dump repeats triples.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

from .errors import EndpointQueryError, QueryTimeoutError
from .terms import SKOLEM

FACTS_PER_SUBJECT = 5
SEED = 43
log = logging.getLogger(__name__)


@dataclass
class EngineCheck:
    sampled: int = 0
    missing: list[str] = field(default_factory=list)
    dump_triples: int = 0
    endpoint_triples: int | None = None  # None: the engine could not count

    @property
    def count_differs(self) -> bool:
        return self.endpoint_triples is not None and self.endpoint_triples != self.dump_triples

    def warning(self) -> str | None:
        if not self.count_differs:
            return None
        more = self.endpoint_triples > self.dump_triples
        return (f"the endpoint holds {self.endpoint_triples:,} triples and the dump gave {self.dump_triples:,}: "
                + ("it has other data in the store's graph, or labels the dump's loader keeps in the catalog only"
                   if more else "the dump repeats triples, or the engine was not loaded completely"))


def check_engine(store, access, run_id: int, *, sample: int, dump_triples: int) -> EngineCheck:
    """Ask ``access`` (the store's endpoint) about ``sample`` subjects of run ``run_id``."""
    check = EngineCheck(dump_triples=dump_triples)
    if sample > 0:
        for subject, facts in _sample(store, run_id, sample).items():
            check.sampled += 1
            if not bool(access.query(_ask(subject, facts), prefixes={})):
                check.missing.append(subject)
    try:
        check.endpoint_triples = access.count()
    except (EndpointQueryError, QueryTimeoutError) as exc:
        log.info("the endpoint did not count its triples: %s", exc)
    if check.warning():
        log.warning(check.warning())
    return check


def _sample(store, run_id: int, n: int) -> dict[str, list[tuple[str, str | None]]]:
    """Subject -> up to FACTS_PER_SUBJECT (predicate, IRI object or None) of its facts."""
    with store.catalog.connect() as con:
        where = "WHERE run_id = ?" if con.execute("SELECT count(*) FROM statements WHERE run_id = ?",
                                                  [run_id]).fetchone()[0] else "WHERE ? IS NOT NULL"
        rows = con.execute(f"""
            WITH subjects AS (SELECT s FROM (SELECT DISTINCT s FROM statements {where})
                              USING SAMPLE reservoir({int(n)} ROWS) REPEATABLE ({SEED}))
            SELECT st.s, st.p, CASE WHEN st.o_literal THEN NULL ELSE st.o END AS o
            FROM statements st JOIN subjects USING (s)
            ORDER BY st.s, st.o_literal, st.p, st.o
        """, [run_id]).fetchall()
    sampled: dict[str, list[tuple[str, str | None]]] = {}
    for s, p, o in rows:
        if o is not None and o.startswith(SKOLEM):
            o = None  # a blank node in the engine: its label is the engine's own
        facts = sampled.setdefault(s, [])
        if len(facts) < FACTS_PER_SUBJECT:
            facts.append((p, o))
    return sampled


def _ask(subject: str, facts: list[tuple[str, str | None]]) -> str:
    with_objects = [(p, o) for p, o in facts if o is not None]
    if with_objects:
        values = " ".join(f"(<{_iri(p)}> <{_iri(o)}>)" for p, o in with_objects)
        return f"ASK {{ VALUES (?p ?o) {{ {values} }} <{_iri(subject)}> ?p ?o }}"
    values = " ".join(f"<{_iri(p)}>" for p, _ in facts)
    return f"ASK {{ VALUES ?p {{ {values} }} <{_iri(subject)}> ?p ?o }}"


def _iri(text: str) -> str:
    return "".join(f"%{ord(c):02X}" if c in '<>"{}|^`\\ ' else c for c in text)


__all__ = ["check_engine", "EngineCheck"]
