"""Open answers against human-written texts: WebNLG (sets of 1-7 DBpedia facts about one
subject, each with texts people wrote to say exactly those facts).

    python bench/open_answers.py SPLIT_PATH [--limit N] [--out DIR] [--fresh]

For each entry (``--limit N``: N entries spread evenly over the triple counts 1-7, the
same ones every run; without it, every entry, in an order whose every prefix is spread
over the counts too, so a run of the whole split that is stopped and resumed reports a
fair sample as it goes: ``--report``) the entry's facts are loaded into a small store of their own
(DBpedia names become labels: ``Aarhus_Airport`` → "Aarhus Airport", ``runwayLength`` →
"runway length"), indexed, and five systems write about its subject:

* ``method``: "Tell me about <subject>" asked end to end (``QAMethod.answer`` routes it to
  the open answer: sketch, verification against the triple index, telling facts, writing,
  checking);
* ``writer``: the writer and checker straight over the entry's facts (no sketch, no search);
* ``template``: one plain sentence a fact (``qa.open.verbalize``);
* ``io``: the model alone, with no facts;
* ``no-verify``: the pseudo-graph without verification (the paper's ablation): the
  sketch's facts as the model wrote them, then the same writing and checking.

Scores against the entry's references: ROUGE-L (rouge-score, F1, best reference, stemmed),
BLEU and chrF (sacrebleu, corpus level, all references). Counts per answer: **facts added**,
the sentences stating a name, number or date that no input fact (nor the question) holds
(``qa.open.claims``), and **facts left out**, the input facts whose value the text does
not state. Results are kept a line an answer in ``DIR/results.jsonl`` (default
``bench/out/open_answers``) and the model's completions in ``DIR/llm-cache.jsonl``, so a
stopped run resumes where it was (``--fresh`` starts over). The table is by triple count.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SYSTEMS = ("method", "writer", "template", "io", "no-verify")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


# -- WebNLG entries ---------------------------------------------------------------------------
def read_split(path: Path) -> list[dict]:
    from kgstore.errors import DatasetError

    if not path.is_file():
        raise DatasetError(f"WebNLG split {path} not found")
    rows = []
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                row = json.loads(line)
                row["triples"], row["texts"]  # noqa: B018  (both must be there)
            except (ValueError, KeyError) as exc:
                raise DatasetError(f"{path}:{line_no}: not a WebNLG entry ({exc})") from None
            rows.append(row)
    return rows


def spread(entries: list[dict], limit: int | None) -> list[dict]:
    """``limit`` entries spread evenly over the triple counts, evenly within each count."""
    if not limit:
        return entries
    by_size: dict[int, list[dict]] = {}
    for e in entries:
        by_size.setdefault(len(e["triples"]), []).append(e)
    sizes = sorted(by_size)
    share = {s: limit // len(sizes) + (1 if i < limit % len(sizes) else 0) for i, s in enumerate(sizes)}
    out = []
    for s in sizes:
        group, n = by_size[s], min(share[s], len(by_size[s]))
        out += [group[(i * len(group)) // n] for i in range(n)]
    return out


def interleaved(entries: list[dict]) -> list[dict]:
    """Every entry, in an order whose every prefix is spread over the triple counts (one of
    each count in turn) and evenly within each count (the halving order: first, middle,
    quarters, ...), so a whole split's run can stop and resume anywhere and the entries
    done so far are a fair sample of it."""
    by_size: dict[int, list[dict]] = {}
    for e in entries:
        by_size.setdefault(len(e["triples"]), []).append(e)
    queues = [[group[i] for i in _halving_order(len(group))] for _, group in sorted(by_size.items())]
    out = []
    for k in range(max((len(q) for q in queues), default=0)):
        out += [q[k] for q in queues if k < len(q)]
    return out


def _halving_order(n: int) -> list[int]:
    """0..n-1 by bit-reversed position: 0, n/2, n/4, 3n/4, ... (each prefix evenly spread)."""
    bits = max(1, (n - 1).bit_length())
    order = sorted(range(1 << bits), key=lambda i: int(format(i, f"0{bits}b")[::-1], 2))
    return [i for i in order if i < n]


def label(name: str) -> str:
    """A DBpedia name as people write it: ``Harrietstown,_New_York`` → "Harrietstown, New York"."""
    return name.replace("_", " ").strip().strip('"').strip()


def relation_label(name: str) -> str:
    """``elevationAboveTheSeaLevel_(in_metres)`` → "elevation above the sea level (in metres)"."""
    return _CAMEL.sub(" ", name).replace("_", " ").replace("  ", " ").strip().lower()


def facts_of(entry: dict) -> list[tuple[str, str, str]]:
    return [(label(s), relation_label(p), label(o)) for s, p, o in entry["triples"]]


def subject_of(entry: dict) -> str:
    """The entity the entry is about: the subject of most of its facts (the first on a tie)."""
    counts = Counter(s for s, _, _ in entry["triples"])
    return label(max(counts, key=lambda s: (counts[s], -[t[0] for t in entry["triples"]].index(s))))


def question_about(subject: str) -> str:
    """"Tell me about X", with X in brackets when its words do not read as a name."""
    from qa.open import read_open

    plain = f"Tell me about {subject}"
    reading = read_open(plain)
    return plain if reading is not None and reading.subject == subject else f"Tell me about [{subject}]"


def build_store(path: Path, facts: list[tuple[str, str, str]], encoder):
    """A store holding ``facts`` (names as labels), with its triple index."""
    import kgstore
    from indexer import build_index
    from kgstore import Store

    tsv = path.parent / f"{path.name}.tsv"
    tsv.write_text("".join(f"{s}\t{p}\t{o}\n" for s, p, o in facts), encoding="utf-8")
    with Store.init(path) as store:
        kgstore.ingest(store, "tsv", tsv)
        build_index(store, encoder=encoder)
    return path


# -- the systems ------------------------------------------------------------------------------
def entry_facts(facts):
    from qa.open import Fact
    from qa.steps._result import Evidence

    grouped: dict[tuple[str, str], list[str]] = {}
    for s, p, o in facts:
        grouped.setdefault((s, p), []).append(o)
    return [Fact(n, s, p, tuple(vs), tuple(Evidence(s, p, o, s, p, o, True) for o in vs), "input")
            for n, ((s, p), vs) in enumerate(grouped.items(), 1)]


def run_systems(entry: dict, llm, encoder, work: Path, systems) -> dict[str, dict]:
    from kgstore import Store
    from qa import QAContext, make_method
    from qa.methods import MethodRun
    from qa.open import OpenReading, open_answer, paragraph, read_open, settle, verbalize, write

    facts = facts_of(entry)
    subject = subject_of(entry)
    question = question_about(subject)
    out: dict[str, dict] = {}
    if "template" in systems:
        out["template"] = {"text": " ".join(verbalize(entry_facts(facts))), "seconds": 0.0, "calls": 0}
    if "writer" in systems:
        run, started = MethodRun(llm), time.perf_counter()
        numbered = entry_facts(facts)
        sentences = settle(write(run, question, numbered), numbered, question)
        out["writer"] = {"text": paragraph(sentences), "sentences": [s.to_dict() for s in sentences],
                         "seconds": time.perf_counter() - started, "calls": run.tokens.calls}
    if "io" in systems:
        run, started = MethodRun(llm), time.perf_counter()
        text = run.ask("io", "open_io", {"question": question}, max_tokens=160, temperature=0.0).text
        out["io"] = {"text": " ".join(text.split()), "seconds": time.perf_counter() - started, "calls": 1}
    if {"method", "no-verify"} & set(systems):
        path = build_store(work / "store", facts, encoder)
        try:
            with Store.open(path, read_only=True) as store:
                context = QAContext(store, llm)
                if "method" in systems:
                    answer = make_method("cascade", context).answer(question)
                    out["method"] = _answer_row(answer)
                if "no-verify" in systems:
                    run, started = MethodRun(llm), time.perf_counter()
                    with store.reading():
                        reading = read_open(question) or OpenReading(subject, "request")
                        answer = open_answer(context, question, run, reading=reading, verify=False)
                    answer.seconds, answer.tokens, answer.trace = time.perf_counter() - started, run.tokens, run.trace
                    out["no-verify"] = _answer_row(answer)
        finally:
            shutil.rmtree(path, ignore_errors=True)
    return out


def _answer_row(answer) -> dict:
    return {"text": "" if answer.refused else (answer.text or " ".join(answer.answers)),
            "sentences": list(answer.sentences), "refused": answer.refused,
            "refusal": answer.refusal.message if answer.refusal else None,
            "seconds": answer.seconds, "calls": answer.tokens.calls}


# -- scores -----------------------------------------------------------------------------------
def plain(text: str) -> str:
    """The text without its citations."""
    return re.sub(r"\s*(?:\[\d+\])+", "", text).strip()


def sentences_of(text: str) -> list[str]:
    """The text's sentences; a piece that ends in an abbreviation ("St.", "Jr.") joins the next."""
    out: list[str] = []
    for piece in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9])", plain(text)):
        if out and re.search(r"(?:^|\s)(?:[A-Z][a-z]?|[A-Z]\.[A-Z])\.$", out[-1]):
            out[-1] += " " + piece
        elif piece.strip():
            out.append(piece)
    return out


def added_sentences(text: str, facts, question: str) -> int:
    """The sentences that state a name, number or date no input fact holds (an input
    date backs its month's name, as in the checker)."""
    from qa.open._checker import fact_words, unsupported_claims

    backing = [question] + [x for f in entry_facts(facts) for x in fact_words(f)]
    return sum(1 for s in sentences_of(text) if unsupported_claims(s, backing))


def said(value: str, text: str) -> bool:
    """Whether ``text`` states ``value``: its words (numbers by value), two in three at least."""
    from qa.open._checker import number_key

    def tokens(t: str) -> set[str]:
        words = {w.lower() for w in re.findall(r"[^\W\d_]+", t) if len(w) > 2 or w.isupper()}
        return words | {number_key(n) for n in re.findall(r"\d+(?:[.,]\d+)*", t)}

    wanted, have = tokens(value), tokens(text)
    if not wanted:
        return value.lower() in text.lower()
    return len(wanted & have) / len(wanted) >= 2 / 3


def score_rows(rows: list[dict]) -> dict:
    import sacrebleu
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    hyps = [plain(r["text"]) for r in rows]
    width = max(len(r["refs"]) for r in rows)
    streams = [[r["refs"][i] if i < len(r["refs"]) else None for r in rows] for i in range(width)]
    sentences = sum(len(sentences_of(r["text"])) for r in rows)
    return {
        "n": len(rows),
        "rougeL": 100 * statistics.mean(scorer.score_multi(r["refs"], h)["rougeL"].fmeasure if h else 0.0
                                        for r, h in zip(rows, hyps)),
        "bleu": sacrebleu.corpus_bleu(hyps, streams).score,
        "chrf": sacrebleu.corpus_chrf(hyps, streams).score,
        "added": sum(r["added"] for r in rows) / sentences if sentences else 0.0,
        "left_out": sum(r["left_out"] for r in rows) / sum(r["facts"] for r in rows),
        "refused": sum(1 for r in rows if r.get("refused")),
        "p50_s": statistics.median(r["seconds"] for r in rows),
    }


def table(results: list[dict]) -> str:
    lines = ["| system | triples | n | ROUGE-L | BLEU | chrF | facts added (sentences) | facts left out | refused | p50 s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    # an entry that people wrote no text for cannot be scored against one (WebNLG dev has some)
    unscored = {r["eid"] for r in results if not r["refs"]}
    results = [r for r in results if r["eid"] not in unscored]
    sizes = sorted({r["size"] for r in results})
    for system in SYSTEMS:
        mine = [r for r in results if r["system"] == system]
        if not mine:
            continue
        for size in sizes + ["all"]:
            rows = [r for r in mine if size == "all" or r["size"] == size]
            if not rows:
                continue
            s = score_rows(rows)
            lines.append(f"| {system} | {size} | {s['n']} | {s['rougeL']:.1f} | {s['bleu']:.1f} | {s['chrf']:.1f} | "
                         f"{s['added']:.3f} | {s['left_out']:.3f} | {s['refused']} | {s['p50_s']:.1f} |")
    if unscored:
        lines.append(f"\n{len(unscored)} entries have no reference text and are left out of the table.")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("split", type=Path)
    parser.add_argument("--limit", type=int, default=None, help="N entries spread over the triple counts")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "open_answers")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help=f"comma-separated, of {', '.join(SYSTEMS)}")
    parser.add_argument("--fresh", action="store_true", help="start over instead of resuming")
    parser.add_argument("--report", action="store_true",
                        help="print the table of the answers kept so far, asking nothing")
    args = parser.parse_args()
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    from kgstore.errors import KgstoreError

    try:
        run(args, systems)
    except KgstoreError as exc:
        sys.exit(f"Error: {exc}")


def run(args, systems) -> None:
    from indexer import Encoder
    from kgstore.config import LLMConfig
    from qa.llm import llm_from_config
    from qa.llm._cache import CachingLLM

    entries = spread(read_split(args.split), args.limit) if args.limit else interleaved(read_split(args.split))
    args.out.mkdir(parents=True, exist_ok=True)
    results_path = args.out / "results.jsonl"
    if args.fresh:
        for p in (results_path, args.out / "llm-cache.jsonl"):
            p.unlink(missing_ok=True)
    results = [json.loads(ln) for ln in results_path.read_text(encoding="utf-8").splitlines()
               if ln.strip()] if results_path.is_file() else []
    done = {(r["eid"], r["system"]) for r in results}
    if args.report:
        entries = [e for e in entries if all((e["eid"], s) in done for s in systems)]
        print(f"{len(entries)} entries with every system answered")
        print(table([r for r in results if r["eid"] in {e["eid"] for e in entries} and r["system"] in systems]))
        return
    llm = CachingLLM(llm_from_config(LLMConfig()), args.out / "llm-cache.jsonl")
    encoder = None
    for i, entry in enumerate(entries, 1):
        todo = [s for s in systems if (entry["eid"], s) not in done]
        if not todo:
            continue
        if encoder is None and {"method", "no-verify"} & set(todo):
            encoder = Encoder()
        facts = facts_of(entry)
        question = question_about(subject_of(entry))
        with tempfile.TemporaryDirectory() as tmp:
            outputs = run_systems(entry, llm, encoder, Path(tmp), todo)
        with open(results_path, "a", encoding="utf-8") as f:
            for system, o in outputs.items():
                row = {"eid": entry["eid"], "size": len(facts), "system": system, "question": question,
                       "facts": len(facts), "refs": entry["texts"], **o,
                       "added": added_sentences(o["text"], facts, question),
                       "left_out": sum(1 for _, _, v in facts if not said(v, plain(o["text"])))}
                results.append(row)
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"[{i}/{len(entries)}] {entry['eid']} ({len(facts)} facts): "
              + ", ".join(f"{s} {outputs[s]['seconds']:.1f}s" for s in outputs), file=sys.stderr, flush=True)
    wanted = {e["eid"] for e in entries}
    print(table([r for r in results if r["eid"] in wanted and r["system"] in systems]))


if __name__ == "__main__":
    main()
