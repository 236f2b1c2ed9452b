"""The one error tree of kgstore.

    KgstoreError
    ├─ StoreError
    │   ├─ StoreLockedError        a second writer tried to open the store
    │   ├─ StoreClosedError        the store was used after close()
    │   ├─ StoreNotFoundError      no store at that path (run `kgstore init`)
    │   ├─ SchemaVersionError      the store was written by an incompatible version
    │   └─ ReadOnlyError           a write was attempted through a read-only handle
    ├─ QueryError                  a SPARQL/Cypher query failed to parse or run
    │   ├─ QueryRefusedError       a query tried to write or reach the network (SERVICE, LOAD)
    │   └─ QueryTimeoutError       a query ran past its time limit (server, QA sandbox)
    ├─ IngestError
    │   ├─ UnknownFormatError      no loader of that name
    │   ├─ FormatMismatchError     the file's first lines were all rejected: it is in another format
    │   ├─ MalformedRecordError    one bad line (recorded and skipped, raised only on demand)
    │   ├─ TooManyErrorsError      --max-errors was exceeded
    │   └─ TruncatedInputError     a compressed file ended early
    ├─ GraphError                  property-graph backend problems
    │   └─ GraphNotSyncedError     the store was never mirrored (run `kgstore graph sync`)
    ├─ VectorIndexError            (never shadow the builtin IndexError)
    │   └─ EncoderMismatchError    the index was built with another encoder
    └─ QAError
        ├─ LLMUnavailableError     no model/runtime/endpoint could be used
        ├─ LLMRequestError         the backend refused or failed one request (terminal)
        ├─ UnknownMethodError      no QA method of that name
        ├─ UnknownOptionError      an option the QA method does not take
        ├─ DatasetError            a QA benchmark file is missing or malformed
        ├─ UnsafeQueryError        generated query text tried to do something not allowed
        └─ QuerySyntaxError        generated query text does not parse (line, column, offset)
            ├─ CypherSyntaxError
            └─ SparqlSyntaxError

Every class carries an ``exit_code`` the CLI uses, and ``transient`` says
whether retrying the same call could succeed.
"""
from __future__ import annotations


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


class VectorIndexError(KgstoreError):
    exit_code = 10


class EncoderMismatchError(VectorIndexError):
    pass


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
