"""The one error tree of kgstore.

    KgstoreError
    ├─ StoreError
    │   ├─ StoreLockedError        a second writer tried to open the store
    │   │   └─ CatalogBusyError    the catalog stayed held by another process too long
    │   ├─ StoreClosedError        the store was used after close()
    │   ├─ StoreNotFoundError      no store at that path (run `kgstore init`)
    │   ├─ SchemaVersionError      the store was written by an incompatible version
    │   ├─ ReadOnlyError           a write was attempted through a read-only handle
    │   ├─ DiskFullError           the disk holding the store filled up (free space, rerun to resume)
    │   └─ EndpointError           the SPARQL endpoint a store's triples live in failed (`init --endpoint`)
    │       ├─ EndpointUnreachableError  nothing answered at its URL, or the connection broke
    │       ├─ EndpointAuthError   it refused the credentials (401/403)
    │       └─ EndpointMismatchError  it lacks subjects of the dump `sync --from-dump` read
    ├─ QueryError                  a SPARQL/Cypher query failed to parse or run
    │   ├─ QueryRefusedError       a query tried to write or reach the network (SERVICE, LOAD)
    │   ├─ QueryTimeoutError       a query ran past its time limit (server, QA sandbox, endpoint)
    │   │   └─ EndpointTimeoutError  the SPARQL endpoint did not answer within the limit
    │   └─ EndpointQueryError      the SPARQL endpoint refused or failed one query (its own words)
    ├─ IngestError
    │   ├─ UnknownFormatError      no loader of that name
    │   ├─ FormatMismatchError     the file's first lines were all rejected: it is in another format
    │   ├─ MalformedRecordError    one bad line (recorded and skipped, raised only on demand)
    │   ├─ TooManyErrorsError      --max-errors was exceeded
    │   └─ TruncatedInputError     a compressed file ended early
    ├─ GraphError                  property-graph backend problems
    │   └─ GraphNotSyncedError     the store was never mirrored (run `kgstore graph sync`)
    ├─ ExportError                 `kgstore export` cannot write where asked (directory not empty...)
    ├─ VectorIndexError            (never shadow the builtin IndexError)
    │   ├─ EncoderMismatchError    the index was built with another encoder
    │   ├─ VectorServerUnreachableError  the vector server ([index] dsn) did not answer
    │   └─ VectorExtensionMissingError   the Postgres database lacks the pgvector extension
    ├─ QAError
    │   ├─ LLMUnavailableError     no model/runtime/endpoint could be used
    │   ├─ LLMRequestError         the backend refused or failed one request (terminal)
    │   ├─ UnknownMethodError      no QA method of that name
    │   ├─ UnknownOptionError      an option the QA method does not take
    │   ├─ OptionValueError        an option's value the method cannot work with ("answer_tokens": 0)
    │   ├─ DatasetError            a QA benchmark file is missing or malformed
    │   ├─ UnsafeQueryError        generated query text tried to do something not allowed
    │   └─ QuerySyntaxError        generated query text does not parse (line, column, offset)
    │       ├─ CypherSyntaxError
    │       └─ SparqlSyntaxError
    ├─ RemoteError                 talking to a running `kgstore serve` failed (`kgstore ask --server`)
    │   ├─ ServerUnreachableError  nothing answered at the URL (not started, wrong host or port)
    │   ├─ ServerTimeoutError      the server took longer than the client's timeout to answer
    │   └─ ServerRefusedError      the server answered with an error status (400, 401, 403, 503...)
    └─ InternalError               a fault in kgstore itself (any other exception), said in one line

Every class carries an ``exit_code`` the CLI uses, and ``transient`` says
whether retrying the same call could succeed.
"""
from __future__ import annotations

import os
import traceback


class KgstoreError(Exception):
    exit_code = 1
    transient = False


class StoreError(KgstoreError):
    exit_code = 3


class StoreLockedError(StoreError):
    exit_code = 4
    transient = True

    def __init__(self, path, holder: str | None = None):
        self.path = str(path)
        self.holder = holder
        who = f" (held by {holder})" if holder else ""
        super().__init__(
            f"store {self.path} is already open for writing by another process{who}; "
            "wait for it to finish, or open it read-only"
        )


class CatalogBusyError(StoreLockedError):
    """The catalog stayed held by another process (a reader such as `kgstore serve`, or
    a writer) for longer than this process would wait."""

    def __init__(self, path, holder: str | None, waited_s: float):
        self.path = str(path)
        self.holder = holder
        self.waited_s = waited_s
        who = holder or "another process"
        StoreError.__init__(
            self, f"the catalog of {self.path} stayed held by {who} for {waited_s:.0f} s; stop that process, "
            "or update a served store through the server (`kgstore update --server URL FILE`)")


class StoreClosedError(StoreError):
    def __init__(self, path):
        self.path = str(path)
        super().__init__(f"store {self.path} was used after it was closed")


class StoreNotFoundError(StoreError):
    def __init__(self, path):
        self.path = str(path)
        super().__init__(f"no kgstore store at {self.path}; create one with `kgstore init {self.path}`")


class SchemaVersionError(StoreError):
    pass


class ReadOnlyError(StoreError):
    pass


class QueryError(KgstoreError):
    exit_code = 5


class QueryRefusedError(QueryError):
    """A read query that would write or reach the network. ``offset`` is where in the
    query text the refused keyword stands."""

    def __init__(self, reason: str, offset: int | None = None):
        self.reason = reason
        self.offset = offset
        super().__init__(reason)


class QueryTimeoutError(QueryError):
    """A query ran past ``timeout_s``. pyoxigraph cannot cancel a query: the caller stopped
    waiting and the worker stops at its next row."""

    transient = True

    def __init__(self, timeout_s: float):
        self.timeout_s = timeout_s
        super().__init__(f"the query ran past the time limit of {timeout_s:g} s and was abandoned; "
                         "narrow it (LIMIT, a more selective pattern) or raise [sparql] timeout_s")


class IngestError(KgstoreError):
    exit_code = 6


class UnknownFormatError(IngestError):
    exit_code = 2

    def __init__(self, name: str, known: list[str]):
        self.name = name
        self.known = list(known)
        super().__init__(f"unknown format {name!r}; choose one of: {', '.join(self.known)}")


class FormatMismatchError(IngestError):
    """Every line of the first batch was rejected: the file is not in ``fmt``. ``guess`` is
    the format it looks like (None when it looks like none). Nothing is committed."""

    exit_code = 2

    def __init__(self, path, fmt: str, lines: int, first: tuple[int, str], guess: str | None):
        self.path = str(path)
        self.fmt = fmt
        self.guess = guess
        hint = (f"it looks like {guess}: try `kgstore ingest STORE {guess} {self.path}`" if guess and guess != fmt
                else "it does not look like any format kgstore reads")
        super().__init__(
            f"{self.path}: the {fmt} loader rejected all of the first {lines} line(s) "
            f"(line {first[0]}: {first[1]}); {hint}. Nothing was loaded.")


class MalformedRecordError(IngestError):
    def __init__(self, path, line_no: int, reason: str):
        self.path = str(path)
        self.line_no = line_no
        self.reason = reason
        super().__init__(f"{self.path}:{line_no}: {reason}")


class TooManyErrorsError(IngestError):
    exit_code = 7

    def __init__(self, path, errors: int, limit: int):
        self.path = str(path)
        self.errors = errors
        self.limit = limit
        super().__init__(
            f"{self.path}: {errors} malformed records exceeded --max-errors {limit}; "
            "what was read before is committed, see `kgstore rejects` for the lines"
        )


class TruncatedInputError(IngestError):
    exit_code = 8

    def __init__(self, path, line_no: int, detail: str = ""):
        self.path = str(path)
        self.line_no = line_no
        extra = f" ({detail})" if detail else ""
        super().__init__(
            f"{self.path}: the compressed input ends early after line {line_no}{extra}; "
            "everything before it is committed and the checkpoint is kept"
        )


class GraphError(KgstoreError):
    exit_code = 9


class GraphNotSyncedError(GraphError):
    def __init__(self, path, backend: str = "ladybug"):
        self.path = str(path)
        self.backend = backend
        super().__init__(
            f"the {backend} property graph of {self.path} has not been synced yet; "
            f"run `kgstore graph sync {self.path}` first"
        )


class ExportError(KgstoreError):
    """An export (``kgstore export``) was asked for something it will not do, such as
    writing into a directory that holds other files."""

    exit_code = 2


class VectorIndexError(KgstoreError):
    exit_code = 10


class EncoderMismatchError(VectorIndexError):
    pass


class VectorServerUnreachableError(VectorIndexError):
    """A server-side vector backend (``[index] backend = "pgvector"``) could not be reached.
    ``address`` is where it was looked for, never with a password in it."""

    transient = True

    def __init__(self, backend: str, address: str, detail: str = ""):
        self.backend = backend
        self.address = address
        extra = f" ({detail.strip()})" if detail.strip() else ""
        super().__init__(f"the {backend} vector server at {address} cannot be reached{extra}; start it, or check "
                         "[index] dsn in kgstore.toml (or the KGSTORE_PG_DSN environment variable)")


class VectorExtensionMissingError(VectorIndexError):
    """The vector server answered, but lacks the extension the backend needs (pgvector's
    ``vector`` in a Postgres database)."""

    def __init__(self, address: str, extension: str, detail: str = ""):
        self.address = address
        self.extension = extension
        extra = f" ({detail.strip()})" if detail.strip() else ""
        super().__init__(f"the database at {address} has no {extension!r} extension and it could not be created"
                         f"{extra}; install pgvector on the server and run `CREATE EXTENSION {extension};` in that "
                         "database as a superuser")


class QAError(KgstoreError):
    exit_code = 11


class LLMUnavailableError(QAError):
    transient = True

    def __init__(self, message: str, *, transient: bool = True):
        # Unreachable endpoints are worth a retry; a missing model file is not.
        self.transient = transient
        super().__init__(message)


class LLMRequestError(QAError):
    """The backend answered but rejected the request (bad schema, context overflow, auth)."""


class UnknownMethodError(QAError):
    exit_code = 2

    def __init__(self, name: str, known: list[str]):
        self.name = name
        self.known = list(known)
        super().__init__(f"unknown QA method {name!r}; choose one of: {', '.join(self.known)}")


class UnknownOptionError(QAError):
    exit_code = 2

    def __init__(self, method: str, names: list[str], known: dict[str, object]):
        self.method = method
        self.names = list(names)
        self.known = dict(known)
        valid = ", ".join(f"{k} (default {v!r})" for k, v in self.known.items()) or "none"
        super().__init__(f"method {method} has no option {', '.join(map(repr, self.names))}; its options: {valid}")


class OptionValueError(QAError, ValueError):
    """A method option of the right type whose value the method or its model cannot work
    with (``answer_tokens=0``: no token to answer in). Raised, not refused: every question
    would fail alike, and the caller gave the value."""

    exit_code = 2


class DatasetError(QAError):
    exit_code = 2


class UnsafeQueryError(QAError):
    def __init__(self, reason: str, position: int | None = None, *, line: int | None = None,
                 column: int | None = None):
        self.reason = reason
        self.position = position
        self.line = line
        self.column = column
        if line is not None:
            at = f" (line {line}, column {column})"
        else:
            at = f" at position {position}" if position is not None else ""
        super().__init__(f"{reason}{at}")


class QuerySyntaxError(QAError):
    """Generated query text that does not parse. ``line``/``column`` are 1-based and
    ``offset`` 0-based, all in the text the caller passed, so the caller can point the LLM
    at them."""

    language = "query"

    def __init__(self, reason: str, *, line: int, column: int, offset: int, line_text: str = ""):
        self.reason = reason
        self.line = line
        self.column = column
        self.offset = offset
        self.line_text = line_text
        super().__init__(f"{self.language} syntax error at line {line}, column {column}: {reason}")


class CypherSyntaxError(QuerySyntaxError):
    language = "Cypher"


class SparqlSyntaxError(QuerySyntaxError):
    language = "SPARQL"


class RemoteError(KgstoreError):
    """A client of a running `kgstore serve` (``kgstore ask --server URL``) could not get an
    answer from it. ``url`` is the server's base URL."""

    exit_code = 12

    def __init__(self, url: str, message: str):
        self.url = url
        super().__init__(message)


class ServerUnreachableError(RemoteError):
    transient = True

    def __init__(self, url: str, detail: str = ""):
        extra = f" ({detail})" if detail else ""
        super().__init__(url, f"no kgstore server answered at {url}{extra}; start one with "
                              "`kgstore serve STORE`, or check the host and port in --server")


class ServerTimeoutError(RemoteError):
    transient = True

    def __init__(self, url: str, timeout_s: float):
        self.timeout_s = timeout_s
        super().__init__(url, f"the server at {url} did not answer within {timeout_s:g} s (questions queue "
                              "there for its one model); raise --timeout, or ask again when it is less busy")


class ServerRefusedError(RemoteError):
    """The server answered with an error status. ``status`` is the HTTP status,
    ``server_message`` the server's own words, ``error_type`` the server's name for the
    error class when it sent one (its JSON ``type``)."""

    exit_code = 13

    def __init__(self, url: str, status: int, server_message: str, *, error_type: str | None = None,
                 token_sent: bool = False):
        self.status = status
        self.server_message = server_message
        self.error_type = error_type
        self.transient = status in (429, 502, 503, 504)
        super().__init__(url, _refusal_sentence(url, status, server_message, token_sent))


def _refusal_sentence(url: str, status: int, said: str, token_sent: bool) -> str:
    said = said.strip().rstrip(".") or "no reason given"
    if status == 401:
        if token_sent:
            return (f"the server at {url} rejected the token (401): check --token or KGSTORE_TOKEN "
                    "against the server's --token")
        return f"the server at {url} requires a token (401): pass --token TOKEN or set KGSTORE_TOKEN"
    if status == 403:
        return f"the server at {url} forbids this request (403): {said}"
    if status == 404:
        return (f"the server at {url} has no /ask endpoint (404): give --server the base URL of "
                "`kgstore serve`, such as http://127.0.0.1:7878")
    if status == 400:
        return f"the server at {url} refused the question (400): {said}"
    if status == 413:
        return f"the server at {url} refused the request as too large (413): {said}"
    if status == 503:
        return f"the server at {url} cannot answer now (503): {said}; ask again later"
    return f"the server at {url} failed to answer ({status}): {said}"


class DiskFullError(StoreError):
    """A write to the store failed for want of space (ENOSPC, whichever library wrote).
    What was committed before stays committed: once space is freed, the same command
    resumes. ``mount`` is the mount point of the full disk, ``detail`` the writer's words."""

    exit_code = 14
    transient = True

    def __init__(self, path, doing: str, *, mount: str | None = None, detail: str = ""):
        self.path = str(path)
        self.doing = doing
        self.mount = mount
        self.detail = detail
        disk = f"the disk mounted at {mount}" if mount else "the disk holding it"
        said = f" ({detail.strip()})" if detail.strip() else ""
        super().__init__(f"no space left on device while {doing} {self.path}{said}: free space on {disk} "
                         "and rerun the same command to resume; everything committed before is kept")


class EndpointError(StoreError):
    """The SPARQL endpoint that holds a store's triples (``kgstore init --endpoint``) could
    not serve it. ``url`` is the endpoint's URL."""

    exit_code = 15

    def __init__(self, url: str, message: str):
        self.url = url
        super().__init__(message)


class EndpointUnreachableError(EndpointError):
    """Nothing answered at the endpoint's URL (not started, wrong host or port), the
    connection broke during a query, or it stayed unavailable (502/503/504) through the
    retries."""

    transient = True

    def __init__(self, url: str, detail: str = ""):
        extra = f" ({detail})" if detail else ""
        super().__init__(url, f"the SPARQL endpoint at {url} is unreachable{extra}; check that it runs and "
                              "the URL in the store's kgstore.toml ([endpoint] url)")


class EndpointAuthError(EndpointError):
    def __init__(self, url: str, status: int, said: str = ""):
        self.status = status
        said = f": {said.strip()[:300]}" if said.strip() else ""
        super().__init__(url, f"the SPARQL endpoint at {url} refused the credentials ({status}){said}; "
                              "check the token or user and password given to `kgstore init --endpoint`")


class EndpointMismatchError(EndpointError):
    """`kgstore sync --from-dump`: sampled subjects of the dump have none of their dump's
    triples in the endpoint (``missing`` of ``sampled``): the engine was loaded from
    another file, into another graph, or not completely."""

    def __init__(self, url: str, dump: str, sampled: int, missing: list[str], counts: str | None = None):
        self.dump = dump
        self.sampled = sampled
        self.missing = list(missing)
        shown = ", ".join(self.missing[:3]) + (", ..." if len(self.missing) > 3 else "")
        counts = f"; {counts}" if counts else ""
        super().__init__(url, f"the SPARQL endpoint at {url} lacks {len(self.missing)} of {sampled} sampled subjects "
                              f"of {dump} ({shown}){counts}: load the engine from that file (into the store's graph, "
                              "[endpoint] graph), then run the same command again; the catalog built from the "
                              "dump is kept, and only the check runs again")


class EndpointQueryError(QueryError):
    """The endpoint answered one query with an error status (or with results it marked as
    incomplete). ``status`` is the HTTP status, ``endpoint_message`` the endpoint's words."""

    def __init__(self, url: str, status: int, endpoint_message: str):
        self.url = url
        self.status = status
        self.endpoint_message = endpoint_message
        said = " ".join(endpoint_message.split())[:500] or "no reason given"
        super().__init__(f"the SPARQL endpoint at {url} refused the query ({status}): {said}")


class EndpointTimeoutError(QueryTimeoutError):
    """The endpoint did not finish the query within ``timeout_s``: no answer came in time,
    or (``incomplete``) the endpoint stopped it at its own limit and said its rows were
    incomplete (Virtuoso answers 200 with the rows found so far)."""

    def __init__(self, url: str, timeout_s: float, *, incomplete: bool = False):
        self.url = url
        self.incomplete = incomplete
        what = ("stopped the query at its time limit and sent incomplete results (kgstore drops them)"
                if incomplete else f"did not answer the query within {timeout_s:g} s")
        QueryError.__init__(self, f"the SPARQL endpoint at {url} {what}; narrow the query (LIMIT, a more "
                                  "selective pattern) or raise [endpoint] timeout_s")
        self.timeout_s = timeout_s


DEBUG_VARIABLE = "KGSTORE_DEBUG"


def showing_tracebacks() -> bool:
    """Whether a fault in kgstore itself is raised as it is, traceback and all
    (``KGSTORE_DEBUG=1``), instead of being said in one line."""
    return os.environ.get(DEBUG_VARIABLE, "").strip().lower() not in ("", "0", "false", "no")


class InternalError(KgstoreError):
    """An exception that is none of the above: a bug in kgstore (or in a library it calls
    that slipped past the error it should have become). The user gets one line that names
    it; ``KGSTORE_DEBUG=1`` shows the traceback, and ``where`` keeps it for traces.
    Exit code 70, ``EX_SOFTWARE`` of sysexits."""

    exit_code = 70

    def __init__(self, fault: BaseException):
        self.fault = fault
        self.where = "".join(traceback.format_exception(fault)).rstrip()
        said = str(fault).strip() or "no message"
        super().__init__(f"internal error (a bug in kgstore; please report it): {type(fault).__name__}: {said}; "
                         f"run again with {DEBUG_VARIABLE}=1 to see where")
