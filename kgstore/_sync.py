"""The catalog of a store over a SPARQL endpoint, built from the endpoint: :func:`sync`.

How the endpoint is read depends on what init probed:

* **No result cap** (Oxigraph server, QLever): ``SELECT ?s ?p ?o WHERE { ?s ?p ?o }``
  (or its ``CONSTRUCT`` as N-Triples: :func:`reads_ntriples`) in OFFSET/LIMIT segments
  that grow from ``FIRST_SEGMENT_ROWS`` to ``segment_rows``, ``READERS`` of them in flight,
  each read and decoded ahead by a thread (kgstore/_segment_reader.py), committed in pages
  of ``page_rows``. No ORDER BY: sorting is what such an endpoint does
  worst (Oxigraph sorted 43,000 triples by STR(?s) in 3.3 s, and would for every page).
  Resuming asks for the rows after the committed ones, which relies on the endpoint giving
  an unchanged graph's rows in the same order (Oxigraph reads its SPO index in order).
  Pages may split a subject: its records merge in the catalog as an ingest's batches do.
* **A result cap** (Virtuoso's ``ResultSetMaxRows``): pages of whole subjects. The next
  subjects come from one query, as many as the cap lets through, keyset-paged where the
  endpoint allows it (OFFSET over subjects otherwise)::

      SELECT DISTINCT ?s WHERE { ?s ?p ?o FILTER(isIRI(?s) && STR(?s) > "LAST") }
      ORDER BY STR(?s) LIMIT CAP-1

  and their triples in pages, ``SELECT ?s ?p ?o WHERE { VALUES ?s { ... } ?s ?p ?o }``
  (index lookups). Sorting is the costly part on a large graph (STR() hides the index), so
  it is done once per cap's worth of subjects, not per page. A page that comes back at the
  cap may have been cut: it is asked again for half the subjects, and a single subject
  with more triples than the cap is read in OFFSET pages of its own. Subjects per page
  follow the triples per subject seen so far.

Answers are read in the fastest faithful syntax probed: TSV and N-Triples lines decoded by
Arrow (kgstore/_line_terms.py), XML or JSON results by pyoxigraph. A page's entity rows are
staged and merged into ``entities`` once, at the end (kgstore/_entity_stage.py). Each page is committed to the catalog with its cursor in one DuckDB
transaction: a sync killed at any point resumes after its last committed page. The run is
an ``ingest_runs`` row (format ``sparql-endpoint``), so `kgstore runs` lists it. Blank-node
subjects are not read (paging needs IRIs); blank-node objects become skolem IRIs.

A second sync after a finished one first counts the endpoint's triples: the same count
means nothing to do; else (or with ``full``) it reads everything again, and at its end the
facts of the earlier runs are dropped, so facts removed from the endpoint go too.
"""
from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import islice
from typing import Callable, Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pyoxigraph as ox

from ._catalog import Catalog
from ._columns import triple_columns
from ._disk import disk_full_as_error
from ._endpoint import EndpointTriples
from ._endpoint_probe import N_TRIPLES, RESULTS_FORMATS
from ._segment_reader import SegmentFile, SegmentReader, read_blocks
from ._entity_stage import clear_stage, merge_staged_entities, stage_entities, start_stage
from ._store import Store
from ._line_terms import column_pages
from ._sync_records import blank_node_prefix, catalog_records, triples_of_solutions
from .errors import EndpointQueryError, StoreError
from .records import Triple

FORMAT = "sparql-endpoint"
SEGMENT_ROWS = 2_000_000  # rows per request at most when the endpoint does not cap results
FIRST_SEGMENT_ROWS = 50_000  # the first request's rows; each next one asks for twice as many
READERS = 2  # requests in flight at once (kgstore/_segment_reader.py)
_CURSOR_KEY = "sync_cursor:{run_id}"
_UNCOUNTED = "subjects_not_counted"


@dataclass
class SyncProgress:
    pages: int
    subjects: int | None  # None: not counted (the endpoint streams triples in no subject order)
    triples: int
    seconds: float
    cursor: str


@dataclass
class SyncSummary:
    endpoint: str
    run_id: int
    status: str  # "done" or "up to date"
    resumed_from_page: int = 0
    counts: dict = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def subjects_counted(self) -> bool:
        """False when the endpoint streamed triples in no subject order: a subject then
        starts many times, and the subjects were not counted."""
        return not self.counts.get(_UNCOUNTED)

    @property
    def subjects_per_s(self) -> float | None:
        if not self.subjects_counted:
            return None
        return self.counts.get("subjects_this_run", 0) / self.seconds if self.seconds > 0 else 0.0

    @property
    def triples_per_s(self) -> float:
        return self.counts.get("triples_this_run", 0) / self.seconds if self.seconds > 0 else 0.0


ProgressCallback = Callable[[SyncProgress], None]


@disk_full_as_error("syncing the catalog of")
def sync(store: Store, *, full: bool = False, page_rows: int | None = None, segment_rows: int | None = None,
         progress: ProgressCallback | None = None) -> SyncSummary:
    """Build or catch up the catalog of ``store`` (opened for writing, over an endpoint)
    from its endpoint (see the module docstring). ``page_rows`` overrides the probed page
    size (rows committed at a time), ``segment_rows`` the rows per request of a streamed sync."""
    store._check_writable()
    triples_access = store.triples
    if not isinstance(triples_access, EndpointTriples):
        raise StoreError(f"{store.path} keeps its triples here, not in a SPARQL endpoint: `kgstore sync` reads an "
                         "endpoint (create the store with `kgstore init STORE --endpoint URL`); use `kgstore ingest`")
    reader = _PageReader(triples_access, store.config, page_rows, segment_rows)
    source = triples_access.client.url + (f" graph {triples_access.graph}" if triples_access.graph else "")
    checksum = hashlib.sha256(source.encode()).hexdigest()
    options = {"graph": triples_access.graph, "languages": list(store.config.languages)}
    started = time.monotonic()

    with store.catalog.transaction() as con:
        previous = Catalog.find_run(con, checksum, FORMAT, options)
        cursor = None
        if previous and previous["status"] != "done":
            run_id, counts = previous["run_id"], Counter(previous["counts"])
            cursor = json.loads(Catalog.get_meta(con, _CURSOR_KEY.format(run_id=run_id)) or "null")
            start_stage(con)
            con.execute("UPDATE ingest_runs SET status = 'running', error = NULL WHERE run_id = ?", [run_id])
        else:
            total = None
            if previous and not full:
                total = triples_access.count()
                if total == previous["counts"].get("endpoint_triples"):
                    return SyncSummary(source, previous["run_id"], "up to date", counts=previous["counts"],
                                       seconds=time.monotonic() - started)
            run_id = Catalog.start_run(con, file=source, size=0, checksum=checksum, fmt=FORMAT, options=options)
            counts = Counter() if total is None else Counter({"endpoint_triples": total})
            clear_stage(con)
    # What the next sync compares with, counted while this one reads (the count is a scan
    # of the graph by the engine: 0.2 s of 288,713 triples on Oxigraph server)
    counting = None if "endpoint_triples" in counts else _in_background(triples_access.count)
    resumed_from = int(counts.get("pages", 0)) if cursor is not None else 0
    counts["subjects_this_run"] = counts["triples_this_run"] = 0
    try:
        with store.catalog.pinned():  # one catalog connection for the whole sync, not one per page
            _read_pages(store, reader, run_id, counts, cursor, source, started, progress)
        with store.catalog.transaction() as con:
            if counting is not None:
                counts["endpoint_triples"] = counting.result()
                Catalog.checkpoint(con, run_id, counts["pages"], counts["subjects"], dict(counts))
            merge_staged_entities(con)
            earlier = [r for r in Catalog.runs_of(con, checksum, FORMAT) if r != run_id]
            Catalog.forget_facts_of_runs(con, earlier)
            Catalog.move_predicate_labels(con)
            Catalog.finalize(con)
            Catalog.end_run(con, run_id, "done")
    except BaseException as exc:
        with store.catalog.transaction() as con:
            Catalog.end_run(con, run_id, "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed",
                            str(exc) or type(exc).__name__)
        raise
    return SyncSummary(source, run_id, "done", resumed_from, dict(counts), time.monotonic() - started)


def reads_ntriples(caps, graph: str | None) -> bool:
    """Whether a streamed sync reads N-Triples (a CONSTRUCT) rather than SELECT results:
    where TSV results would not be faithful (Virtuoso: its N-Triples cost it half the CPU
    of its XML results), and only from one named graph: the default graph may be a union,
    where a CONSTRUCT, giving a set of triples, could give fewer rows than asked for and so
    end the sync before its end."""
    return caps.construct_ntriples and caps.results_format != "tsv" and not caps.result_cap and bool(graph)


def _in_background(count: Callable[[], int]) -> Future:
    pool = ThreadPoolExecutor(1, thread_name_prefix="kgstore-count")
    try:
        return pool.submit(count)
    finally:
        pool.shutdown(wait=False)


def _read_pages(store, reader, run_id, counts, cursor, source, started, progress) -> None:
    """Each page and its cursor in one catalog transaction."""
    pages = reader.pages(cursor)
    try:
        _write_pages(store, pages, run_id, counts, source, started, progress)
    finally:
        pages.close()  # now, not when a traceback lets go of it: the reading threads stop


def _write_pages(store, pages, run_id, counts, source, started, progress) -> None:
    for page in pages:
        columns = page.columns if page.columns is not None else triple_columns(page.triples)
        entities, relations = catalog_records(page.triples, store.config.languages, columns=columns)
        rows = len(columns)
        counts["pages"] += 1
        if page.subjects is None:
            counts[_UNCOUNTED] = 1
        else:
            counts["subjects"] += page.subjects
            counts["subjects_this_run"] += page.subjects
        counts["triples"] += rows
        counts["triples_this_run"] += rows
        with store.catalog.transaction() as con:
            counts["facts"] += Catalog.write_rows(con, run_id, Catalog.facts_of_columns(columns, run_id), None,
                                                  relations, [], source)
            stage_entities(con, counts["pages"], Catalog.entities_table(entities))
            Catalog.set_meta(con, _CURSOR_KEY.format(run_id=run_id), json.dumps(page.cursor))
            Catalog.checkpoint(con, run_id, counts["pages"], counts["subjects"], dict(counts))
        if progress:
            progress(SyncProgress(counts["pages"], None if counts.get(_UNCOUNTED) else counts["subjects"],
                                  counts["triples"], time.monotonic() - started, _where(page.cursor)))


def _where(cursor: dict) -> str:
    if "after" in cursor:
        return cursor["after"]
    if "offset" in cursor:
        return f"row {cursor['offset']:,}"
    return f"subject {cursor['subjects']:,}"


@dataclass
class _Page:
    triples: list | None  # None where the reader gave columns only
    subjects: int | None  # subjects that start in this page; None once the stream is seen unsorted
    cursor: dict  # where the next page starts (see _PageReader)
    columns: pa.StructArray | None = None  # the triples as triple_columns(), where the reader made them


class _PageReader:
    """Pages from the endpoint, in one of two ways (the module docstring says when):

    * streamed (no result cap): ``SELECT ?s ?p ?o`` in segments of ``segment_rows`` rows
      (OFFSET/LIMIT, one request each, so that no answer runs for hours), cut into pages of
      ``page_rows`` rows as they arrive; the cursor is the rows read (``{"offset": n}``);
    * by subjects (a cap): pages of whole subjects, keyset (``{"after": s}``) or OFFSET
      over subjects (``{"subjects": n}``), each page below the cap.
    """

    def __init__(self, access: EndpointTriples, config, page_rows: int | None, segment_rows: int | None):
        caps = config.endpoint_capabilities
        self.client = access.client
        self.graphs = [access.graph] if access.graph else []
        self.cap = caps.result_cap
        self.keyset = caps.keyset_paging
        self.format = RESULTS_FORMATS.get(caps.results_format, ox.QueryResultsFormat.JSON)
        self.ntriples = reads_ntriples(caps, access.graph)
        self.page_rows = max(1, page_rows or caps.page_rows)
        if self.cap:
            self.page_rows = min(self.page_rows, max(1, self.cap // 2))
        self.segment_rows = max(self.page_rows, segment_rows or SEGMENT_ROWS)
        self.readers = READERS
        self.bnodes = blank_node_prefix(self.client.url)
        self.per_subject = 10.0  # triples per subject, learnt as pages come
        # A streamed endpoint that gives a subject's triples together (Oxigraph reads its SPO
        # index) lets the subjects be counted as they start; one that does not (Virtuoso
        # without a cap) shows a subject starting again within a page, and is not counted
        self.grouped = True

    def pages(self, cursor: dict | None) -> Iterator[_Page]:
        if not self.cap:
            return self._streamed(cursor or {"offset": 0})
        return self._by_subjects(cursor or ({"after": ""} if self.keyset else {"subjects": 0}))

    # -- streamed ----------------------------------------------------------------------------
    def _streamed(self, cursor: dict) -> Iterator[_Page]:
        last = cursor.get("last")
        segments = SegmentReader(self._segment_pages, readers=self.readers, first_rows=FIRST_SEGMENT_ROWS,
                                 max_rows=self.segment_rows)
        for offset, asked, pages in segments.segments(cursor["offset"]):
            got = 0
            for columns in self._parsed(pages):
                got += len(columns)
                starts, last = self._starts(columns, last)
                yield _Page(None, starts if self.grouped else None, {"offset": offset + got, "last": last}, columns)
            if got < asked:
                return

    def _segment_pages(self, offset: int, rows: int) -> Iterator:
        """In a segment's thread: its answer's pages as columns where the answer is made of
        lines (N-Triples, TSV: decoded by Arrow, kgstore/_line_terms.py), else its bytes."""
        verb, media = ("CONSTRUCT { ?s ?p ?o }", N_TRIPLES.media_type) if self.ntriples else \
            ("SELECT ?s ?p ?o", self.format.media_type)
        with self.client.stream(f"{verb} WHERE {{ ?s ?p ?o }} OFFSET {offset} LIMIT {rows}", accept=media,
                                default_graphs=self.graphs) as body:
            if not (self.ntriples or self.format == ox.QueryResultsFormat.TSV):
                yield from read_blocks(body)
                return
            try:
                yield from column_pages(body, self.page_rows, self.bnodes, ntriples=self.ntriples)
            except SyntaxError as exc:
                raise EndpointQueryError(self.client.url, 200, f"its answer could not be read: {exc}") from None

    def _parsed(self, pages: Iterator) -> Iterator[pa.StructArray]:
        """Pages of columns as they came, or the blocks of other answers parsed by pyoxigraph."""
        if self.ntriples or self.format == ox.QueryResultsFormat.TSV:
            yield from pages
            return
        rows = self._triples(SegmentFile(pages))
        while page := list(islice(rows, self.page_rows)):
            yield triple_columns(page)

    def _starts(self, columns: pa.StructArray, last: str | None) -> tuple[int, str | None]:
        """Subjects that start in a page (a subject other than the row's before, ``last``
        before the first), and its last subject. Counted by Arrow, not row by row. A
        subject that starts twice in one page means the stream is not grouped by subject."""
        s = columns.field("s")
        before = pa.concat_arrays([pa.array([last], pa.string()), s.slice(0, len(s) - 1)])
        starting = pc.fill_null(pc.not_equal(s, before), True)
        started = pc.filter(s, starting)
        if self.grouped and pc.count_distinct(started).as_py() < len(started):
            self.grouped = False
        return len(started), s[len(s) - 1].as_py()

    def _triples(self, body) -> Iterator[Triple]:
        try:
            yield from triples_of_solutions(ox.parse_query_results(body, format=self.format), self.bnodes)
        except (OSError, SyntaxError) as exc:
            if getattr(body, "error", None) is not None:
                raise body.error from None
            raise EndpointQueryError(self.client.url, 200, f"its answer could not be read: {exc}") from None

    # -- by subjects -------------------------------------------------------------------------
    def _by_subjects(self, cursor: dict) -> Iterator[_Page]:
        while True:
            # The next subjects in one query (sorting them is the costly part: as many at a
            # time as the cap lets through), then their triples in chunks by VALUES.
            batch = max(1, self.cap - 1)
            subjects = [t.value for (t,) in self._solutions(self._subjects_query(cursor, batch))]
            done = 0
            while done < len(subjects):
                want = max(1, min(len(subjects) - done,
                                  int(self.page_rows * 0.8 / max(self.per_subject, 1.0))))
                rows = self._rows(self._triples_query(subjects[done:done + want]))
                while len(rows) >= self.cap and want > 1:  # maybe cut at the cap: fewer subjects
                    want = max(1, want // 2)
                    rows = self._rows(self._triples_query(subjects[done:done + want]))
                if len(rows) >= self.cap:  # one subject with more triples than the cap
                    rows = self._whole_subject(subjects[done])
                chunk = subjects[done:done + want]
                done += want
                self.per_subject = max(1.0, 0.5 * self.per_subject + 0.5 * len(rows) / want)
                if "after" in cursor:
                    page_cursor = {"after": chunk[-1]}
                else:
                    page_cursor = {"subjects": cursor["subjects"] + done}
                yield _Page(rows, want, page_cursor)
            if len(subjects) < batch:
                return
            cursor = page_cursor

    def _subjects_query(self, cursor: dict, limit: int) -> str:
        if "after" in cursor:
            after = cursor["after"].replace("\\", "\\\\").replace('"', '\\"')
            return (f'SELECT DISTINCT ?s WHERE {{ ?s ?p ?o FILTER(isIRI(?s) && STR(?s) > "{after}") }} '
                    f"ORDER BY STR(?s) LIMIT {limit}")
        return (f"SELECT DISTINCT ?s WHERE {{ ?s ?p ?o FILTER(isIRI(?s)) }} ORDER BY STR(?s) "
                f"OFFSET {cursor['subjects']} LIMIT {limit}")

    @staticmethod
    def _triples_query(subjects: list[str]) -> str:
        values = " ".join(f"<{_iri(s)}>" for s in subjects)
        return f"SELECT ?s ?p ?o WHERE {{ VALUES ?s {{ {values} }} ?s ?p ?o }}"

    def _whole_subject(self, subject: str) -> list[Triple]:
        rows: list[Triple] = []
        while True:
            got = self._rows(f"SELECT ?s ?p ?o WHERE {{ BIND(<{_iri(subject)}> AS ?s) ?s ?p ?o }} ORDER BY ?p ?o "
                             f"OFFSET {len(rows)} LIMIT {self.cap}")
            rows += got
            if len(got) < self.cap:
                return rows

    def _rows(self, sparql: str) -> list[Triple]:
        return list(self._triples(self._answer(sparql)))

    def _solutions(self, sparql: str) -> list:
        return list(ox.parse_query_results(self._answer(sparql), format=self.format))

    def _answer(self, sparql: str) -> bytes:
        return self.client.query(sparql, accept=self.format.media_type, default_graphs=self.graphs).body


def _iri(text: str) -> str:
    """An IRI as it may stand between < and > (the few characters that may not, escaped)."""
    return "".join(f"%{ord(c):02X}" if c in '<>"{}|^`\\ ' else c for c in text)


__all__ = ["sync", "SyncSummary", "SyncProgress", "FORMAT", "reads_ntriples"]
