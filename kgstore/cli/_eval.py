"""`kgstore eval`: score QA methods on a benchmark or on anyone's questions file."""
from __future__ import annotations

import contextlib
import json
from pathlib import Path

import click

from ._common import STORE_ARG, emit_rows, format_option, open_store, progress_bar, stderr_console
from ._qa import load_llm, make_method, method_names, methods_help, parse_options


@click.command("eval")
@STORE_ARG
@click.option("--dataset", "-d", type=click.Choice(["metaqa", "pathquestion", "wc2014"]), default=None,
              help="Benchmark: MetaQA (movies), PathQuestion (PQ-2H/3H) or WorldCup2014 (WC-P1/P2). "
                   "Or --questions FILE for your own questions.")
@click.option("--questions", "questions_file", metavar="FILE", default=None,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Score on the questions of FILE instead of a benchmark: TSV (question<TAB>answer|answer), "
                   'JSONL ({"question", "answers", "sparql"?, "type"?, "id"?}) or QALD-9/10 JSON, told apart '
                   "by the content.")
@click.option("--questions-format", type=click.Choice(["tsv", "jsonl", "qald"]), default=None,
              help="With --questions: read FILE as this format instead of guessing it from the content.")
@click.option("--language", default="en", show_default=True, metavar="CODE",
              help="With a QALD file: the language of the questions to ask (QALD lists each question in several).")
@click.option("--gold-from-sparql", is_flag=True,
              help="With --questions: take each question's gold answers from running its gold SPARQL on STORE "
                   "(read-only, with the store's [sparql] time limit and row cap), not from FILE. A gold query "
                   "that fails, times out or finds nothing makes its question unscorable, with the reason.")
@click.option("--hops", type=int, default=1, show_default=True,
              help="Question hops: MetaQA 1/2/3, PathQuestion 2/3, WorldCup2014 1/2.")
@click.option("--split", default="dev", show_default=True, help="Split file (MetaQA: dev; the others have none).")
@click.option("--method", "-m", "methods", multiple=True, metavar="NAME",
              help=methods_help("QA method to score (repeat to compare side by side; default pseudo-graph)."))
@click.option("--limit", type=int, default=100, show_default=True, help="Questions to score (0 = all).")
@click.option("--sample", type=click.Choice(["spread", "head"]), default="spread", show_default=True,
              help="Which questions: evenly spread over the file, or the first ones.")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder holding metaqa/, pathquestion/, wc2014/ (default: ../shared/data/qa when present).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Report folder (default: ./eval-reports/DATASET-HOPShop-SPLIT, or ./eval-reports/FILE-NAME "
                   "with --questions).")
@click.option("--resume", is_flag=True, help="Reuse answers already in OUT/results-METHOD.jsonl.")
@click.option("--replay", is_flag=True,
              help="Answer every prompt the model has already answered in OUT/llm-cache.jsonl from that file, "
                   "and ask the model only new prompts: a run after a change to the code around the model, "
                   "compared on the same completions. Its latencies are not the model's.")
@click.option("--allow-parametric", is_flag=True, help="Let methods fall back to the model's own knowledge.")
@click.option("--option", "-o", "options", multiple=True, metavar="KEY=VALUE",
              help="A method option passed to every method, e.g. -o threshold=0.6.")
@click.option("--unanswerable", is_flag=True,
              help="Score not-in-store questions instead: each question's topic entity renamed to a plausible "
                   "name the store lacks (deterministic). A right method refuses them all.")
@click.option("--sweep", "sweep_spec", default=None, metavar="KEY=START:STOP:STEP",
              help="Run each method at every value of option KEY on the questions and on their not-in-store "
                   "versions; write Hits@1, refusal and wrongful refusal per value (sweep-*.json/.png). "
                   "The model runs once per prompt: completions are cached in OUT/llm-cache.jsonl.")
@format_option("table", "json")
@click.pass_context
def eval_cmd(ctx, store, dataset, questions_file, questions_format, language, gold_from_sparql, hops, split, methods,
             limit, sample, data_dir, out_dir, resume, replay, allow_parametric, options, unanswerable, sweep_spec,
             fmt):
    """Score QA methods on a benchmark whose KB is loaded in STORE, or on your own questions.

    \b
    Prints Hits@1, F1, refusal rate, hallucinated-identifier rate (answers whose IRI is not
    in the store), latency p50/p90 and tokens per question, and writes report.json (every
    question with its answers), report.md and report.png to OUT. Only MetaQA questions the
    partial KB can answer are scored (answerable_flags/). Each answer is saved as it
    completes, so an interrupted run continues with --resume.

    \b
    With --questions FILE (TSV, JSONL or QALD JSON), answers are scored by kind: 7 = "7" =
    7.0, yes = true, 1952-03-11 = 1952-03-11T00:00:00Z (a gold date at its own precision:
    a gold 1952 matches any day of 1952), entities by IRI or by label. The report adds
    Hits@1 and F1 per question shape (count, boolean, comparison, superlative, constraint,
    round trip, literal, chain), from each question's "type" or its gold query.
    See docs/evaluating.md, "Evaluate on your own questions".

    \b
    Examples (load the KB first: kgstore ingest ./metaqa tsv ../shared/data/qa/metaqa/kb_partial.txt,
    then kgstore index ./metaqa):
      kgstore eval ./metaqa --dataset metaqa --hops 1 --split dev -m io -m qsm -m pseudo-graph --limit 100
      kgstore eval ./metaqa --dataset metaqa --hops 1 -m pgmr --unanswerable --limit 50
      kgstore eval ./metaqa --dataset metaqa --hops 1 -m pgmr --sweep threshold=0.5:0.95:0.05 --limit 50
      kgstore eval ./metaqa --dataset metaqa --hops 3 -m pgmr --out runs/after --replay   (runs/after holds
        a copy of an earlier run's llm-cache.jsonl)
      kgstore eval ./mystore --questions my-questions.tsv -m cascade --limit 0
      kgstore eval ./wikidata --questions qald_10.json --language de -m pgmr
      kgstore eval ./mystore --questions qald_10.json --gold-from-sparql -m pgmr --limit 0
    """
    from qa.eval import read_dataset, run_eval, select_items, unanswerable_items, write_report
    from qa.llm import CachingLLM

    _check_eval_source(ctx, dataset, questions_file)
    methods = list(methods) or ["pseudo-graph"]
    unknown = [m for m in methods if m not in method_names()]
    if unknown:
        from kgstore.errors import UnknownMethodError

        raise UnknownMethodError(unknown[0], method_names())
    if questions_file is not None:
        from qa.eval import read_questions_file

        ds = read_questions_file(questions_file, fmt=questions_format, language=language)
        name = questions_file.stem
    else:
        ds = read_dataset(dataset, hops=hops, split=split, data_dir=data_dir or default_data_dir())
        name = f"{dataset}-{hops}hop-{split}"
    items = select_items(ds.items, limit or None, sample=sample)
    out_dir = out_dir or Path("eval-reports") / f"{name}{'-absent' if unanswerable else ''}"
    st = open_store(ctx, store, read_only=True)
    if questions_file is not None:
        items = _gold_for_questions(st, items, gold_from_sparql, ds.notes)
    method_options = parse_options(options)
    # the not-in-store versions are looked up in the store only when a run uses them
    absent = unanswerable_items(items, ds.items, lambda name: _store_has_name(st, name)) \
        if unanswerable or sweep_spec else []
    if unanswerable:
        ds.notes.append(f"not-in-store questions: {len(absent)} of {len(items)} with the topic entity renamed")
        items = absent
    # every completion is kept, so a later --sweep or --replay over the same questions reuses it
    llm = CachingLLM(load_llm(ctx, st), out_dir / "llm-cache.jsonl", reuse=replay or sweep_spec is not None)
    if sweep_spec:
        _run_sweep(st, llm, methods, items, absent, method_options, sweep_spec, out_dir, ds, fmt)
        return
    runs = []
    for method_name in methods:
        qa_method = make_method(st, llm, method_name, method_options)
        with _eval_progress(method_name, len(items)) as on_progress:
            run = run_eval(qa_method, items, store=st, allow_parametric=allow_parametric,
                           results_path=out_dir / f"results-{method_name}.jsonl", resume=resume,
                           progress=on_progress)
        run.params = {"allow_parametric": allow_parametric, **({"replay": True} if replay else {}), **method_options}
        runs.append(run)
    meta = {"store": str(Path(store).resolve()), "dataset": ds.describe(), "questions": len(items), "sample": sample,
            "llm": llm.describe(), "methods": methods}
    if questions_file is not None:
        meta["gold_from_sparql"] = gold_from_sparql
    paths = write_report(out_dir, runs, meta)
    if fmt == "json":
        click.echo(json.dumps({"summary": [{"method": r.method, **r.summary} for r in runs],
                               "report": {k: str(v) for k, v in paths.items()}}, indent=2))
        return
    _print_eval_tables(runs, ds, items)
    click.echo(f"report: {paths['md']}  {paths['json']}  {paths['png']}")


def _check_eval_source(ctx, dataset, questions_file) -> None:
    """One source of questions, and no option that belongs to the other."""
    from click.core import ParameterSource

    def given(name: str) -> bool:
        return ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE

    if dataset and questions_file is not None:
        raise click.UsageError("give either --dataset NAME (a benchmark) or --questions FILE (your own questions), "
                               "not both")
    if not dataset and questions_file is None:
        raise click.UsageError("say which questions to score: --dataset metaqa|pathquestion|wc2014, or "
                               "--questions FILE (TSV, JSONL or QALD JSON)")
    if questions_file is not None:
        for param, flag in (("hops", "--hops"), ("split", "--split"), ("data_dir", "--data-dir")):
            if given(param):
                raise click.UsageError(f"{flag} goes with --dataset; a --questions file is scored as it is")
    else:
        for param, flag in (("questions_format", "--questions-format"), ("language", "--language"),
                            ("gold_from_sparql", "--gold-from-sparql")):
            if given(param):
                raise click.UsageError(f"{flag} goes with --questions FILE")


def _gold_for_questions(store, items, from_sparql: bool, notes: list[str]):
    """A questions file's gold: from its gold queries run on ``store`` (--gold-from-sparql,
    with what that gave added to ``notes``) or as written; entity IRIs get the store's
    labels either way."""
    from qa.eval import gold_from_sparql, gold_notes, label_gold

    if from_sparql:
        with progress_bar("gold queries", len(items), "") as update:
            found = gold_from_sparql(items, store, progress=lambda done, total: update(done))
        notes.append("gold answers from running each gold query on the store (--gold-from-sparql)")
        notes.extend(gold_notes(items, found))
        items = found
    return label_gold(items, store)


def _print_eval_tables(runs, ds, items) -> None:
    from qa.eval import SHAPES, TABLE_COLUMNS, format_cell, summary_rows

    scorable = sum(1 for item in items if getattr(item, "unscorable", None) is None)
    title = (f"{ds.describe()['title']}: {scorable} of {len(items)} questions scorable" if ds.format else
             f"{ds.name} {ds.hops}-hop {ds.split}: {len(items)} of {len(ds.items)} scorable questions")
    rows = [{h: format_cell(k, row.get(k)) for k, h in TABLE_COLUMNS} for row in summary_rows(runs)]
    emit_rows(rows, [h for _, h in TABLE_COLUMNS], "table", title=title)
    shapes = []
    for run in runs:
        shapes += [s for s in run.summary.get("by_shape", {}) if s not in shapes]
    if shapes and ds.format:
        shapes.sort(key=lambda s: SHAPES.index(s) if s in SHAPES else len(SHAPES))
        columns = ["shape", "n"] + [f"{r.method} {m}" for r in runs for m in ("Hits@1", "F1")]
        shape_rows = []
        for shape in shapes:
            row = {"shape": shape, "n": str(max(r.summary.get("by_shape", {}).get(shape, {}).get("questions", 0)
                                                for r in runs))}
            for run in runs:
                cell = run.summary.get("by_shape", {}).get(shape)
                row[f"{run.method} Hits@1"] = format_cell("hits@1", cell["hits@1"] if cell else None)
                row[f"{run.method} F1"] = format_cell("f1", cell["f1"] if cell else None)
            shape_rows.append(row)
        emit_rows(shape_rows, columns, "table", title="per shape")
    if ds.format:
        for note in ds.notes:
            click.echo(f"note: {note}")
    unscorable = len(items) - scorable
    if unscorable:
        reasons: dict[str, int] = {}
        for item in items:
            if item.unscorable:
                key = item.unscorable.split(":", 1)[0]
                reasons[key] = reasons.get(key, 0) + 1
        click.echo(f"{unscorable} unscorable question(s), not scored: "
                   + "; ".join(f"{n} {why}" for why, n in sorted(reasons.items(), key=lambda kv: -kv[1])))


def _store_has_name(store, name: str) -> bool:
    """Whether an entity of ``store`` has ``name`` as label or alias (as written, or with
    underscores read as spaces, as the triple-file loader labels them)."""
    return any(store.entities_by_label(list(dict.fromkeys([name, name.replace("_", " ")]))))


def _run_sweep(store, llm, methods, items, absent, method_options, spec, out_dir, ds, fmt) -> None:
    from qa.eval import parse_sweep, run_eval, sweep_row, write_sweep

    sweep = parse_sweep(spec)
    results = {}
    for name in methods:
        rows = []
        for value in sweep.values:
            options = {**method_options, sweep.key: value}
            normal = run_eval(make_method(store, llm, name, options), items, store=store)
            lacking = run_eval(make_method(store, llm, name, options), absent, store=store)
            rows.append(sweep_row(value, normal.summary, lacking.summary))
            stderr_console().print(f"{name} {sweep.key}={value}: Hits@1 {rows[-1]['hits@1']:.3f}, "
                                   f"refusal (not in store) {rows[-1]['refusal_not_in_store'] or 0:.3f}, "
                                   f"wrongful refusal {rows[-1]['wrongful_refusal']:.3f}")
        meta = {"store": str(store.path), "dataset": ds.describe(), "questions": len(items),
                "not_in_store_questions": len(absent), "title": ds.describe()["title"],
                "options": method_options}
        paths = write_sweep(out_dir, name, sweep, rows, meta)
        results[name] = {"rows": rows, "report": {k: str(v) for k, v in paths.items()}}
    if fmt == "json":
        click.echo(json.dumps(results, indent=2))
        return
    for name, res in results.items():
        emit_rows([{k: (f"{v:.3f}" if isinstance(v, float) else v) for k, v in r.items()} for r in res["rows"]],
                  ["value", "hits@1", "refusal_not_in_store", "wrongful_refusal"], "table",
                  title=f"{name}: {sweep.key} sweep")
        click.echo(f"report: {res['report']['json']}  {res['report']['png']}")


def default_data_dir() -> Path:
    """``../shared/data/qa`` from the working directory, else beside the source checkout."""
    candidates = [Path.cwd().parent / "shared" / "data" / "qa",
                  Path(__file__).resolve().parents[3] / "shared" / "data" / "qa"]
    for c in candidates:
        if c.is_dir():
            return c
    raise click.UsageError("no QA data folder found; pass --data-dir pointing at the folder that holds "
                           "metaqa/, pathquestion/ and wc2014/")


@contextlib.contextmanager
def _eval_progress(method: str, total: int):
    """The shared progress bar, with the running Hits@1 and seconds per question."""
    sums = {"hits": 0.0, "sec": 0.0}
    with progress_bar(method, total, "Hits@1 {task.fields[hits]:.2f}  {task.fields[sec]:.1f} s/q",
                      hits=0.0, sec=0.0) as update:
        def on_record(done, total_, record):
            sums["hits"] += record.get("hits@1", 0.0)  # an unscorable question has no score
            sums["sec"] += record.get("seconds", 0.0)
            update(done, hits=sums["hits"] / done, sec=sums["sec"] / done)

        yield on_record
