"""Readers for the QA benchmarks: MetaQA, PathQuestion and WorldCup2014. Pure parsing:
each returns the questions with their gold answer sets, nothing about any store.

Formats (see each folder's SOURCES.md under ``shared/data/qa``):

* MetaQA ``{h}-hop/vanilla_qa_{split}.txt``: ``question<TAB>a|b|c``, topic entity in
  brackets; ``answerable_flags/{h}-hop_{split}_answerable_in_partial_kb.txt`` has one 1/0
  per question line (only flagged questions are scored: the KB here is partial);
  ``{h}-hop/qa_{split}_qtype.txt`` one question type per line.
* PathQuestion ``PQ-{h}H.txt``: ``question<TAB>answer(a/b/)<TAB>path``.
* WorldCup2014 ``WC-P{h}.txt``: ``question<TAB>answer<TAB>path<TAB>a/b/<TAB>context``.

PathQuestion and WorldCup2014 ship without dev/test splits: the whole file is the pool.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from kgstore.errors import DatasetError

DATASETS = ("metaqa", "pathquestion", "wc2014")
_HOPS = {"metaqa": (1, 2, 3), "pathquestion": (2, 3), "wc2014": (1, 2)}
_TOPIC = re.compile(r"\[([^\]]+)\]")
_PQ_ANSWER = re.compile(r"^(.*)\((.*)\)$")


@dataclass(frozen=True)
class QAItem:
    id: str  # dataset-hops-split:line (1-based line of the question file)
    question: str
    gold: tuple[str, ...]
    topic: str | None = None
    qtype: str | None = None
    path: tuple[str, ...] = ()  # the gold path's relations, where the benchmark gives one
    # questions files (`kgstore eval --questions`): typed gold values (scored by kind, see
    # _typed.py; None means the labels in ``gold`` are compared), the gold SPARQL, the
    # shape, and why the question cannot be scored (None when it can)
    gold_values: tuple | None = None
    sparql: str | None = None
    shape: str | None = None
    unscorable: str | None = None


@dataclass
class Dataset:
    name: str
    hops: int
    split: str
    source: Path
    items: list[QAItem]
    unanswerable_skipped: int = 0
    notes: list[str] = field(default_factory=list)
    title: str | None = None  # how reports name it; default "NAME HOPS-hop SPLIT"
    format: str | None = None  # a questions file's format (tsv, jsonl, qald); None for a benchmark

    def describe(self) -> dict:
        out = {"name": self.name, "hops": self.hops, "split": self.split, "source": str(self.source),
               "questions": len(self.items), "unanswerable_skipped": self.unanswerable_skipped,
               "notes": list(self.notes), "title": self.title or f"{self.name} {self.hops}-hop {self.split}"}
        if self.format:
            out["format"] = self.format
        return out


def read_dataset(name: str, *, hops: int, split: str = "dev", data_dir: str | Path) -> Dataset:
    """The scorable questions of benchmark ``name`` under ``data_dir`` (the ``qa`` folder)."""
    if name not in DATASETS:
        raise DatasetError(f"unknown dataset {name!r}; choose one of: {', '.join(DATASETS)}")
    if hops not in _HOPS[name]:
        raise DatasetError(f"{name} has {'/'.join(map(str, _HOPS[name]))}-hop questions, not {hops}-hop")
    data_dir = Path(data_dir)
    if name == "metaqa":
        return _read_metaqa(data_dir / "metaqa", hops, split)
    if name == "pathquestion":
        return _read_pathquestion(data_dir / "pathquestion" / f"PQ-{hops}H.txt", hops, split)
    return _read_wc2014(data_dir / "wc2014" / f"WC-P{hops}.txt", hops, split)


def _lines(path: Path) -> list[str]:
    if not path.is_file():
        raise DatasetError(f"dataset file {path} not found; pass --data-dir pointing at the folder "
                           "that holds metaqa/, pathquestion/ and wc2014/")
    return path.read_text(encoding="utf-8").splitlines()


def metaqa_question(line: str) -> tuple[str, tuple[str, ...], str | None]:
    """``what does [Tom Cullen] act in<TAB>Weekend`` → (question without brackets, gold, topic)."""
    question, _, answers = line.partition("\t")
    topic = _TOPIC.search(question)
    gold = tuple(a for a in answers.split("|") if a)
    return _TOPIC.sub(r"\1", question).strip(), gold, topic.group(1) if topic else None


def _read_metaqa(folder: Path, hops: int, split: str) -> Dataset:
    source = folder / f"{hops}-hop" / f"vanilla_qa_{split}.txt"
    lines = _lines(source)
    flags_path = folder / "answerable_flags" / f"{hops}-hop_{split}_answerable_in_partial_kb.txt"
    notes = []
    if flags_path.is_file():
        flags = [ln.strip() == "1" for ln in flags_path.read_text().splitlines()]
        if len(flags) != len(lines):
            raise DatasetError(f"{flags_path} has {len(flags)} flags for {len(lines)} questions in {source}")
    else:
        flags = [True] * len(lines)
        notes.append(f"no answerable flags at {flags_path}: every question is scored")
    qtype_path = folder / f"{hops}-hop" / f"qa_{split}_qtype.txt"
    qtypes = qtype_path.read_text().splitlines() if qtype_path.is_file() else []
    items = []
    for i, (line, ok) in enumerate(zip(lines, flags), start=1):
        if not ok or not line.strip():
            continue
        question, gold, topic = metaqa_question(line)
        items.append(QAItem(id=f"metaqa-{hops}hop-{split}:{i}", question=question, gold=gold, topic=topic,
                            qtype=qtypes[i - 1].strip() if i <= len(qtypes) else None))
    return Dataset("metaqa", hops, split, source, items, unanswerable_skipped=sum(1 for f in flags if not f),
                   notes=notes)


def path_relations(path: str) -> tuple[str, ...]:
    """``a#r1#b#r2#c#<end>#c`` → ``("r1", "r2")``: every other field after the start,
    up to the end marker."""
    fields = path.split("#<end>#", 1)[0].split("#")
    return tuple(fields[1::2])


def pathquestion_line(line: str) -> tuple[str, tuple[str, ...], str | None]:
    """``q<TAB>united_kingdom(united_kingdom/)<TAB>a#r#b...`` → (question, gold set, topic)."""
    fields = line.split("\t")
    question, answer = fields[0].strip(), fields[1].strip()
    m = _PQ_ANSWER.match(answer)
    gold = tuple(a for a in m.group(2).split("/") if a) if m else (answer,)
    topic = fields[2].split("#", 1)[0] if len(fields) > 2 else None
    return question, gold or (m.group(1),), topic


def _read_pathquestion(source: Path, hops: int, split: str) -> Dataset:
    return _read_pool("pathquestion", "PathQuestion", pathquestion_line, source, hops, split)


def wc2014_line(line: str) -> tuple[str, tuple[str, ...], str | None]:
    fields = line.split("\t")
    question, answer = fields[0].strip(), fields[1].strip()
    answer_set = [a for a in fields[3].split("/") if a] if len(fields) > 3 else []
    gold = tuple(dict.fromkeys([answer] + answer_set if answer else answer_set))  # the stated answer first
    topic = fields[2].split("#", 1)[0] if len(fields) > 2 else None
    return question, gold, topic


def _read_wc2014(source: Path, hops: int, split: str) -> Dataset:
    return _read_pool("wc2014", "WorldCup2014", wc2014_line, source, hops, split)


def _read_pool(name: str, title: str, parse_line, source: Path, hops: int, split: str) -> Dataset:
    """A benchmark file without splits: every non-blank line is a question of the pool."""
    items = []
    for i, line in enumerate(_lines(source), start=1):
        if line.strip():
            question, gold, topic = parse_line(line)
            fields = line.split("\t")
            path = path_relations(fields[2]) if len(fields) > 2 else ()
            items.append(QAItem(id=f"{name}-{hops}hop:{i}", question=question, gold=gold, topic=topic, path=path))
    return Dataset(name, hops, split, source, items,
                   notes=[f"{title} has no {split} split; all {len(items)} questions are the pool"])


def select_items(items: list[QAItem], limit: int | None, *, sample: str = "spread") -> list[QAItem]:
    """``limit`` questions: the first ones ("head"), or evenly spaced over the file
    ("spread"), since these files list paraphrases and question types in runs."""
    if limit is None or limit >= len(items):
        return list(items)
    if sample == "head":
        return items[:limit]
    if sample != "spread":
        raise DatasetError(f"unknown sample {sample!r}; choose head or spread")
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]
