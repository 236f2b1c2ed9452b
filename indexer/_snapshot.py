"""A read-side copy of a kind's ``index_items`` rows next to its vector file.

``STORE/index/<kind>.rows.arrow`` is an Arrow IPC file of the rows ordered by ``label_id``
(labels are dense from 0, so a label is its row number), written whenever the vector file
is saved. Searches map hnswlib labels to texts and IRIs through it, memory-mapped, instead
of opening DuckDB for every query (which costs tens of milliseconds); the catalog stays
the source of truth, and labels the copy does not have yet are looked up there.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa

ROWS_SQL = """
    SELECT label_id, text, iri, label, extra, deleted FROM index_items WHERE kind = '{kind}' ORDER BY label_id
"""


def rows_path(vector_path: Path) -> Path:
    return Path(vector_path).with_suffix(".rows.arrow")


def write_rows(con, kind: str, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    if not kind.isidentifier():  # kinds are fixed names; never quote-able text
        raise ValueError(f"bad index kind {kind!r}")
    cursor = con.cursor()  # its own result, whatever `con` has pending
    try:
        reader = cursor.sql(ROWS_SQL.format(kind=kind)).to_arrow_reader(50_000)
        with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, reader.schema) as writer:
            for batch in reader:
                writer.write_batch(batch)
    finally:
        cursor.close()
    os.replace(tmp, path)


class RowSnapshot:
    """Rows by label from a memory-mapped Arrow file; ``None`` where it cannot answer."""

    def __init__(self, table: pa.Table):
        self._table = table
        labels = table.column("label_id")
        # dense labels make the row number the label; anything else disables the copy
        self._dense = table.num_rows == 0 or (labels[0].as_py() == 0
                                              and labels[table.num_rows - 1].as_py() == table.num_rows - 1)

    @classmethod
    def load(cls, path: Path) -> "RowSnapshot | None":
        try:
            source = pa.memory_map(str(path), "r")
            return cls(pa.ipc.open_file(source).read_all())
        except (OSError, pa.ArrowInvalid):
            return None

    def __len__(self) -> int:
        return self._table.num_rows if self._dense else 0

    def get(self, labels: list[int]) -> dict[int, tuple[str, str, str, dict] | None]:
        """``{label: (text, iri, label, extra)}`` for live rows, ``None`` for deleted ones;
        labels beyond the copy are left out."""
        known = [x for x in labels if 0 <= x < len(self)]
        if not known:
            return {}
        rows = self._table.take(pa.array(known, pa.int64())).to_pylist()
        out: dict[int, tuple | None] = {}
        for x, row in zip(known, rows):
            if row["deleted"]:
                out[x] = None
            else:
                out[x] = (row["text"], row["iri"], row["label"], json.loads(row["extra"]) if row["extra"] else {})
        return out
