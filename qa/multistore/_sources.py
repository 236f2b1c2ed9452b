"""The stores one answer reads, each under a short name that marks its facts: the store
directory's name (``./wikidata-demo`` → ``wikidata-demo``), made unique with its parent's
name when two directories share one (``a/store``, ``b/store`` → ``a/store``, ``b/store``)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence


@dataclass(frozen=True)
class StoreSource:
    """One store of several, as an answer reads it: its ``name`` (what its facts are marked
    with) and the ``context`` (``qa.QAContext``: the store, the shared model, its index)."""

    name: str
    context: object

    @property
    def store(self):
        return self.context.store


def store_names(paths: Sequence[str | os.PathLike]) -> list[str]:
    """A short, unique name for each store path, in order."""
    resolved = [Path(p).resolve() for p in paths]
    plain = [p.name or str(p) for p in resolved]
    names = [f"{p.parent.name}/{name}" if plain.count(name) > 1 else name for p, name in zip(resolved, plain)]
    out: list[str] = []
    for name in names:  # the same directory twice, or parents of one name: number them
        unique, n = name, 2
        while unique in out:
            unique, n = f"{name}#{n}", n + 1
        out.append(unique)
    return out
