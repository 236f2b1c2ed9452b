"""The Freebase RDF dump (``freebase-rdf-latest.gz``) and files shaped like it.

Accepted line forms (one statement per line, terms separated by tabs or spaces, an
optional fourth graph term ignored):

* the native dump: ``<http://rdf.freebase.com/ns/m.0abc>\t<http://rdf.freebase.com/ns/type.object.name>\t"Name"@en\t.``
* prefix-stripped slices (nchah/freebase-triples): ``</m.0abc>``, ``</type.object.name>``,
  and W3 terms cut to their last segment (``<rdf-schema#label>``, ``<rdf-syntax-ns#type>``,
  ``<owl#inverseOf>``, ``<XMLSchema#date>``);
* Cayley's film quads: ``</en/larry_fine_1902>``, ``</film/performance/actor>``, blank
  nodes ``_:100000``, and the shorthands ``<name>`` / ``<type>``.

IRI rule: a relative ``</a/b/c>`` or ``</a.b.c>`` becomes ``fb:a.b.c`` (Freebase's own dump
writes ids with dots, so ``/film/performance/actor`` is ``fb:film.performance.actor`` and
the key ``/en/larry_fine_1902`` is ``fb:en.larry_fine_1902``); ``<name>`` is
``fb:type.object.name`` and ``<type>`` is ``fb:type.object.type``; any other bare name is
``fb:`` + the name. Blank nodes become skolem IRIs scoped by the file's content
fingerprint (stable across resumes and re-loads) and are flagged as mediators.

What goes where:

* every statement goes to Oxigraph except literals in languages not asked for
  (``options.languages``; untagged literals are always kept; ``*`` or an empty list keeps all);
* ``type.object.name``/``rdfs:label`` give the entity's label (first language asked for, or
  untagged); names in the other languages asked for become aliases; ``common.topic.alias``
  gives aliases and ``common.topic.description`` the description; these annotation
  triples stay out of the catalog's statements table (``kgstore.terms.ANNOTATION_PREDICATES``);
* a subject known as a property (``type.object.type type.property``, ``rdf:type`` some
  ``Property``, or any ``type.property.*``/``rdfs:domain``/``rdfs:range`` statement about it)
  becomes a relation; its name and description become the relation's label and
  description. Relations whose schema never came get a label from their id at finalize
  time ("film performance actor"), see ``Catalog.finalize``;
* mediator (CVT) nodes: blank nodes, and entities typed with a type that carries
  ``freebase.type_hints.mediator "true"`` (flagged here when the hint came first in the
  stream, and by ``Catalog.finalize`` otherwise).

Noisy predicates (``type.object.key``, ``common.topic.webpage``, ...) are kept as they are:
filtering them is what ``--properties`` is for.
"""
from __future__ import annotations

from typing import Iterator

from kgstore import fingerprint
from kgstore.records import (Batch, Checkpoint, EntityRecord, LoadOptions, RejectedLine, RelationRecord,
                             Triple)
from kgstore.terms import (FB, FB_DESCRIPTION, FB_NAME, RDF, RDF_TYPE, RDFS, RDFS_LABEL, SKOLEM, XSD, shorten,
                           skolem_iri)

from ._input import DumpReader
from ._ntriples import TermError, check_iri, parse_literal, split_terms, unescape_iri

OWL = "http://www.w3.org/2002/07/owl#"
FB_TYPE = FB + "type.object.type"
FB_ALIAS = FB + "common.topic.alias"
FB_MEDIATOR_HINT = FB + "freebase.type_hints.mediator"
FB_PROPERTY_TYPE = FB + "type.property"
FB_PROPERTY_PREFIX = FB + "type.property."

NAME_PREDICATES = frozenset({FB_NAME, RDFS_LABEL})
TYPE_PREDICATES = frozenset({FB_TYPE, RDF_TYPE})
PROPERTY_CLASSES = frozenset({
    FB_PROPERTY_TYPE, RDF + "Property", RDFS + "Property", OWL + "ObjectProperty", OWL + "DatatypeProperty",
    OWL + "FunctionalProperty", OWL + "InverseFunctionalProperty",
})
PROPERTY_PREDICATES = frozenset({RDFS + "domain", RDFS + "range", OWL + "inverseOf"})

# Bare names seen in abbreviated Freebase files, and where they really live.
BARE_NAMES = {"name": FB_NAME, "type": FB_TYPE}
W3_STRIPPED = {"rdf-schema#": RDFS, "rdf-syntax-ns#": RDF, "owl#": OWL, "XMLSchema#": XSD}

# Run-level memories are bounded: beyond these sizes the loader only loses shortcuts
# (records get re-sent, late types are flagged by Catalog.finalize), never correctness.
MAX_REMEMBERED = 5_000_000


def expand_iri(text: str) -> str:
    """The full IRI for the inside of ``<...>`` in any of the accepted forms."""
    if text.startswith("/"):
        return FB + text[1:].replace("/", ".")
    if ":" in text:
        return text
    bare = BARE_NAMES.get(text)
    if bare:
        return bare
    for stripped, ns in W3_STRIPPED.items():
        if text.startswith(stripped):
            return ns + text[len(stripped):]
    return FB + text.replace("/", ".")


def short_id(iri: str) -> str:
    """``m.0abc`` for Freebase IRIs, ``_:<scope>/<label>`` for blank nodes, a prefixed name
    (``rdf:type``) or the IRI otherwise."""
    if iri.startswith(FB):
        return iri[len(FB):]
    if iri.startswith(SKOLEM):
        return "_:" + iri[len(SKOLEM):]
    short = shorten(iri)
    return short[1:-1] if short.startswith("<") else short


def label_from_id(relation_id: str) -> str:
    return " ".join(relation_id.replace(".", " ").replace("_", " ").split())


class _RunState:
    """What the loader remembers across the batches of one run."""

    def __init__(self, path: str, options: LoadOptions):
        self.scope = fingerprint(path)
        langs = tuple(lang.lower() for lang in options.languages)
        self.any_language = not langs or "*" in langs or "all" in langs
        self.languages = frozenset(langs)
        self.primary = None if self.any_language else langs[0]
        self.properties = options.properties
        self.entities = options.entities
        self.sent: set[str] = set()  # IRIs whose id-only record went out already
        self.known_properties: set[str] = set()
        self.mediator_types: set[str] = set()

    def language_ok(self, lang: str | None) -> bool:
        if lang is None or self.any_language:
            return True
        return lang in self.languages or lang.split("-", 1)[0] in self.languages

    def is_primary(self, lang: str | None) -> bool:
        if lang is None or self.primary is None:
            return True
        return lang == self.primary or lang.split("-", 1)[0] == self.primary

    def remember(self, collection: set, item: str) -> None:
        if len(collection) < MAX_REMEMBERED:
            collection.add(item)


class _BatchBuilder:
    """Triples and merged records of one batch."""

    def __init__(self, state: _RunState, batch: Batch):
        self.state = state
        self.batch = batch
        self.entities: dict[str, EntityRecord] = {}
        self.relations: dict[str, RelationRecord] = {}

    def entity(self, iri: str, *, mediator: bool = False) -> EntityRecord:
        rec = self.entities.get(iri)
        if rec is None:
            rec = self.entities[iri] = EntityRecord(iri=iri, id=short_id(iri), is_mediator=mediator)
        elif mediator:
            rec.is_mediator = True
        return rec

    def relation(self, iri: str) -> RelationRecord:
        rec = self.relations.get(iri)
        if rec is None:
            rec = self.relations[iri] = RelationRecord(iri=iri, id=short_id(iri))
        return rec

    def touch_entity(self, iri: str, mediator: bool) -> None:
        if iri not in self.entities and iri not in self.state.sent:
            self.entity(iri, mediator=mediator)

    def touch_relation(self, iri: str) -> None:
        if iri not in self.relations and iri not in self.state.sent:
            self.relation(iri)

    def finish(self) -> None:
        batch, sent = self.batch, self.state.sent
        batch.entities = list(self.entities.values())
        batch.relations = list(self.relations.values())
        batch.counts["entities"] += len(batch.entities)
        batch.counts["mediators"] += sum(1 for e in batch.entities if e.is_mediator)
        if len(sent) < MAX_REMEMBERED:
            # only id-level facts are remembered: records carrying labels go out every time
            sent.update(self.entities)
            sent.update(self.relations)


# A relation label derived from its id, in SQL (the same rule as label_from_id).
_DERIVED_LABEL = ("trim(regexp_replace(regexp_replace(coalesce(relations.id, substr(relations.iri, "
                  f"{len(FB) + 1})), '[._]+', ' ', 'g'), '\\s+', ' ', 'g'))")
_FB_LIKE = FB + "%"

FINALIZE_SQL = [
    # Entities typed with a mediator (CVT) type, wherever in the stream(s) the hint came.
    f"""UPDATE entities SET is_mediator = TRUE
        WHERE NOT is_mediator AND iri IN (
            SELECT s FROM statements WHERE p IN ('{FB_TYPE}', '{RDF_TYPE}') AND NOT o_literal
              AND o IN (SELECT s FROM statements WHERE p = '{FB_MEDIATOR_HINT}' AND o = 'true'))""",
    # Properties whose name/description came before the line that showed they are properties.
    f"""UPDATE relations SET
            label = CASE WHEN relations.label IS NULL OR relations.label = {_DERIVED_LABEL}
                         THEN coalesce(e.label, relations.label) ELSE relations.label END,
            description = coalesce(relations.description, e.description)
        FROM entities e
        WHERE e.iri = relations.iri AND relations.iri LIKE '{_FB_LIKE}'
          AND (e.label IS NOT NULL OR e.description IS NOT NULL)""",
    f"DELETE FROM entities WHERE iri LIKE '{_FB_LIKE}' AND iri IN (SELECT iri FROM relations)",
    # Schema objects named by mid with a type.object.id "/domain/type/property" (schema slices).
    f"""UPDATE relations SET
            label = CASE WHEN relations.label IS NULL OR relations.label = {_DERIVED_LABEL}
                         THEN coalesce(x.label, relations.label) ELSE relations.label END,
            description = coalesce(relations.description, x.description)
        FROM (SELECT '{FB}' || replace(ltrim(st.o, '/'), '/', '.') AS target, e.label, e.description
              FROM statements st JOIN entities e ON e.iri = st.s
              WHERE st.p = '{FB}type.object.id' AND st.o_literal
                AND (e.label IS NOT NULL OR e.description IS NOT NULL)) x
        WHERE relations.iri = x.target""",
    # No schema label anywhere: a readable one from the id ("film performance actor").
    f"UPDATE relations SET label = {_DERIVED_LABEL} WHERE label IS NULL AND iri LIKE '{_FB_LIKE}'",
]


class FreebaseLoader:
    """Loader for the Freebase RDF dump and its abbreviated relatives (format ``freebase``)."""

    name = "freebase"

    @staticmethod
    def finalize_catalog(con) -> None:
        """Catalog fixes that need the whole catalog (run by ``kgstore.ingest`` after a load)."""
        for sql in FINALIZE_SQL:
            con.execute(sql)

    def batches(self, path: str, options: LoadOptions, start: Checkpoint | None = None) -> Iterator[Batch]:
        state = _RunState(path, options)
        with DumpReader(path, start) as reader:
            for chunk in reader.chunks(max(1, options.batch_size)):
                batch = Batch(checkpoint=chunk.checkpoint, raw_position=chunk.raw_position)
                builder = _BatchBuilder(state, batch)
                for line_no, raw in chunk.lines:
                    _load_line(line_no, raw, state, builder)
                builder.finish()
                batch.counts["lines"] += len(chunk.lines)
                yield batch


def _term_iri(term: str, state: _RunState) -> tuple[str, bool]:
    """(IRI, is_blank) for a subject/object term that is not a literal."""
    if term[0] == "_":
        label = term[2:]
        return skolem_iri(state.scope, label), True
    return check_iri(expand_iri(unescape_iri(term[1:-1]))), False


def _load_line(line_no: int, raw: bytes, state: _RunState, b: _BatchBuilder) -> None:
    batch = b.batch
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        batch.rejected.append(RejectedLine(line_no, f"not valid UTF-8 ({exc.reason} at byte {exc.start})",
                                           raw.decode("utf-8", "replace").rstrip("\r\n")))
        return
    line = text.strip()
    if "\r" in line:
        # N-Triples ends a line with CR, LF or both (a literal holds a CR only escaped), so
        # a lone CR ends a statement as LF does; the statements share the file's line number.
        for statement in line.split("\r"):
            _load_statement(line_no, statement.strip(), state, b)
        return
    _load_statement(line_no, line, state, b)


def _load_statement(line_no: int, line: str, state: _RunState, b: _BatchBuilder) -> None:
    batch = b.batch
    if not line or line[0] == "#":
        return
    try:
        s_term, p_term, o_term = split_terms(line)
        if s_term[0] == '"':
            raise TermError("a literal cannot be a subject")
        if p_term[0] != "<":
            raise TermError("the predicate must be an IRI")
        s, s_blank = _term_iri(s_term, state)
        p = check_iri(expand_iri(unescape_iri(p_term[1:-1])))
        if o_term[0] == '"':
            lit = parse_literal(o_term)
            o_blank = False
        else:
            lit = None
            o, o_blank = _term_iri(o_term, state)
    except TermError as exc:
        batch.rejected.append(RejectedLine(line_no, str(exc), line))
        return

    if lit is not None and not state.language_ok(lit.lang):
        batch.counts["filtered_language"] += 1
        return
    if state.entities is not None and short_id(s) not in state.entities:
        batch.counts["skipped"] += 1
        return
    if lit is not None and p in NAME_PREDICATES:
        _name(s, lit.value, lit.lang, state, b, s_blank)
    elif lit is not None and p == FB_ALIAS:
        rec = b.entity(s, mediator=s_blank)
        if lit.value not in rec.aliases:
            rec.aliases += (lit.value,)
    elif lit is not None and p == FB_DESCRIPTION:
        if state.is_primary(lit.lang):
            if s in state.known_properties:
                b.relation(s).description = lit.value
            else:
                b.entity(s, mediator=s_blank).description = lit.value
    elif state.properties is not None and short_id(p) not in state.properties:
        batch.counts["skipped"] += 1
        return
    else:
        _schema_hints(s, p, o if lit is None else None, lit, state, b)
        b.touch_relation(p)
        if s not in state.known_properties:
            b.touch_entity(s, s_blank)
        if lit is None:
            b.touch_entity(o, o_blank)

    if lit is None:
        batch.triples.append(Triple(s, p, o))
    elif lit.lang:
        batch.triples.append(Triple(s, p, lit.value, True, None, lit.lang))
    elif lit.datatype and lit.datatype != XSD + "string":
        batch.triples.append(Triple(s, p, lit.value, True, lit.datatype))
    else:
        batch.triples.append(Triple(s, p, lit.value, True))


def _name(s: str, value: str, lang: str | None, state: _RunState, b: _BatchBuilder, blank: bool) -> None:
    if s in state.known_properties:
        if state.is_primary(lang):
            b.relation(s).label = value
        return
    rec = b.entity(s, mediator=blank)
    if state.is_primary(lang):
        rec.label = value
    elif value not in rec.aliases:
        rec.aliases += (value,)


def _schema_hints(s: str, p: str, o: str | None, lit, state: _RunState, b: _BatchBuilder) -> None:
    """Learn which subjects are properties and which types are mediators."""
    if p in TYPE_PREDICATES and o is not None:
        if o in PROPERTY_CLASSES:
            _property(s, state, b)
        elif o in state.mediator_types:
            b.entity(s, mediator=True)
    elif p.startswith(FB_PROPERTY_PREFIX) or p in PROPERTY_PREDICATES:
        _property(s, state, b)
    elif p == FB_MEDIATOR_HINT and lit is not None and lit.value == "true":
        state.remember(state.mediator_types, s)


def _property(s: str, state: _RunState, b: _BatchBuilder) -> None:
    if s not in state.known_properties:
        state.remember(state.known_properties, s)
        b.relation(s)
