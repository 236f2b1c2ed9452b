"""CSV files for ``neo4j-admin database import full``: the bulk path into a Neo4j server or
cluster, for graphs too big for ``UNWIND ... MERGE`` over Bolt.

Per table, a header file (one line) and a data file, given to the import tool in that order
(``--nodes=Entity-header.csv,Entity.csv``: "a separate file with a header ... must be the
first specified file of each data source"), in its header format (Neo4j Operations Manual,
"Import" and "CSV header format"): ``name:ID(space)`` keys a
node and stores the key as property ``name``; ``:START_ID(space)`` / ``:END_ID(space)`` name
a relationship's ends in that ID space; ``:LABEL`` and ``:TYPE`` carry the label and type;
``name:long`` / ``name:boolean`` type a property (untyped ones are strings). Entities and
literals get their own ID spaces (``Entity``, ``Literal``), so an entity IRI and a literal's
key can never collide::

    Entity-header.csv     iri:ID(Entity),id,label,description,popularity:long,is_mediator:boolean,:LABEL
    Literal-header.csv    key:ID(Literal),value,label,datatype,lang,:LABEL
    REL-header.csv        :START_ID(Entity),:END_ID(Entity),pid,label,iri,:TYPE
    HAS_VALUE-header.csv  :START_ID(Entity),:END_ID(Literal),pid,label,iri,:TYPE

(A header kept apart is written exactly as above; DuckDB would quote the names it writes.)

Strings are always quoted (``"`` doubled inside), NULL is an empty unquoted field (no
property); descriptions may hold newlines, hence ``--multiline-fields=true`` in
:func:`import_command`. The import creates no indexes or constraints: ``schema.cypher``
holds the backend's (run it with ``cypher-shell -f`` once the database is started).
DuckDB writes the files straight from the catalog (``COPY ... TO``), so memory stays flat.
"""
from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path

from ._base import ENTITY, HAS_VALUE, LITERAL, REL
from ._export import ROW_SETS, _sql_quote, catalog_state

# table -> [(column of the row set, header field)], in file order; the label/type comes last.
HEADERS: dict[str, list[tuple[str, str]]] = {
    ENTITY: [("iri", f"iri:ID({ENTITY})"), ("id", "id"), ("label", "label"), ("description", "description"),
             ("popularity", "popularity:long"), ("is_mediator", "is_mediator:boolean")],
    LITERAL: [("key", f"key:ID({LITERAL})"), ("value", "value"), ("label", "label"), ("datatype", "datatype"),
              ("lang", "lang")],
    REL: [("from", f":START_ID({ENTITY})"), ("to", f":END_ID({ENTITY})"), ("pid", "pid"), ("label", "label"),
          ("iri", "iri")],
    HAS_VALUE: [("from", f":START_ID({ENTITY})"), ("to", f":END_ID({LITERAL})"), ("pid", "pid"),
                ("label", "label"), ("iri", "iri")],
}
NODE_TABLES = (ENTITY, LITERAL)
RELATIONSHIP_TABLES = (REL, HAS_VALUE)
_UNQUOTED_TYPES = (":long", ":boolean")


def header(table: str) -> list[str]:
    """The header fields of ``table``'s file."""
    last = ":LABEL" if table in NODE_TABLES else ":TYPE"
    return [name for _, name in HEADERS[table]] + [last]


def select_sql(table: str, row_set_sql: list[str]) -> str:
    """The rows of ``table`` (the union of its row sets' SQL) under the header's names."""
    columns = [f'"{col}" AS "{name}"' for col, name in HEADERS[table]]
    last = ":LABEL" if table in NODE_TABLES else ":TYPE"
    columns.append(f"'{table}' AS \"{last}\"")
    union = " UNION ALL ".join(f"({sql})" for sql in row_set_sql)
    return f"SELECT {', '.join(columns)} FROM ({union})"


@dataclass
class ImportFiles:
    directory: Path
    rows: dict[str, int] = field(default_factory=dict)  # table -> data rows written
    seconds: float = 0.0
    catalog_state: str = ""

    def path(self, table: str) -> Path:
        return self.directory / f"{table}.csv"

    def header_path(self, table: str) -> Path:
        return self.directory / f"{table}-header.csv"

    @property
    def schema_path(self) -> Path:
        return self.directory / "schema.cypher"


def export_neo4j_import(store, directory: str | Path) -> ImportFiles:
    """Write ``store``'s graph as ``neo4j-admin database import`` CSV files (and
    ``schema.cypher``) into ``directory``."""
    from ._neo4j import schema_statements

    started = time.perf_counter()
    out = ImportFiles(Path(directory))
    out.directory.mkdir(parents=True, exist_ok=True)
    with store.catalog.connect() as con:
        out.catalog_state = catalog_state(con)
        for table in (*NODE_TABLES, *RELATIONSHIP_TABLES):
            sql = select_sql(table, [rs.query(con) for rs in ROW_SETS if rs.table == table])
            quoted = ", ".join(f'"{name}"' for name in header(table) if not name.endswith(_UNQUOTED_TYPES))
            written = con.execute(
                f"COPY ({sql}) TO '{_sql_quote(str(out.path(table)))}' "
                f"(FORMAT csv, HEADER false, DELIMITER ',', QUOTE '\"', ESCAPE '\"', FORCE_QUOTE ({quoted}))"
            ).fetchall()
            out.rows[table] = int(written[0][0]) if written else 0
            out.header_path(table).write_text(",".join(header(table)) + "\n")
    out.schema_path.write_text("".join(stmt + ";\n" for stmt in schema_statements()))
    out.seconds = time.perf_counter() - started
    return out


def import_command(files: ImportFiles, database: str = "neo4j") -> str:
    """The ``neo4j-admin`` command that loads ``files`` into a new ``database``."""
    parts = ["neo4j-admin", "database", "import", "full", database, "--overwrite-destination",
             "--multiline-fields=true"]
    parts += [f"--nodes={files.header_path(t)},{files.path(t)}" for t in NODE_TABLES]
    parts += [f"--relationships={files.header_path(t)},{files.path(t)}" for t in RELATIONSHIP_TABLES]
    return " ".join(shlex.quote(p) for p in parts)
