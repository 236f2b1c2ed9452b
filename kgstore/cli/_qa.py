"""`kgstore ask` and `kgstore eval`: question answering from the store, and its scores."""
from __future__ import annotations

import contextlib
import json
from pathlib import Path

import click

from ._common import STORE_ARG, emit_rows, format_option, is_interactive, open_store, stderr_console

def _method_names() -> list[str]:
    from qa.methods import method_names

    return method_names()


def _methods_help(prefix: str) -> str:
    from qa.methods import methods_help

    return f"{prefix} Methods: {methods_help()}."


def _parse_options(pairs: tuple[str, ...]) -> dict:
    """``-o top_k=5 -o threshold=0.6`` → {"top_k": 5, "threshold": 0.6} (JSON values, else strings)."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--option")
        try:
            out[key.strip().replace("-", "_")] = json.loads(value)
        except ValueError:
            out[key.strip().replace("-", "_")] = value
    return out


def _load_llm(ctx, store):
    """The store's configured LLM, assembling the packaged model (with a progress bar) on
    first use. A program embedding the CLI may pass its own as ``obj={"llm": ...}``."""
    from qa.llm import llm_from_config

    if isinstance(ctx.obj, dict) and ctx.obj.get("llm") is not None:
        return ctx.obj["llm"]
    if not is_interactive():
        return llm_from_config(store.config.llm)
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

    with Progress(TextColumn("assembling the packaged model"), BarColumn(), DownloadColumn(),
                  console=stderr_console(), transient=True) as progress:
        task = progress.add_task("model", total=None)
        return llm_from_config(store.config.llm,
                               progress=lambda done, total: progress.update(task, completed=done, total=total))


def _make_method(store, llm, name: str, options: dict):
    from qa.methods import QAContext, make_method

    return make_method(name, QAContext(store=store, llm=llm), **options)


def _status(message: str):
    if is_interactive():
        return stderr_console().status(message)
    return contextlib.nullcontext()


@click.command("ask")
@STORE_ARG
@click.argument("question")
@click.option("--method", "-m", default=None, metavar="NAME",
              help=_methods_help("QA method (default cascade: pgmr, then pseudo-graph when pgmr finds no rows)."))
@click.option("--trace", is_flag=True, help="Show every intermediate step (prompts, outputs, retrieval, pruning).")
@click.option("--allow-parametric", is_flag=True,
              help="When the store has no answer, let the model answer from its own knowledge (flagged as such).")
@click.option("--option", "-o", "options", multiple=True, metavar="KEY=VALUE",
              help="A method option, e.g. -o threshold=0.6 -o top_k=10 (repeatable).")
@format_option("table", "json")
@click.pass_context
def ask_cmd(ctx, store, question, method, trace, allow_parametric, options, fmt):
    """Answer QUESTION from STORE, with the evidence triples it rests on, or refuse.

    \b
    The default, cascade, runs pgmr first: the local LLM writes the question's SPARQL with
    placeholders ([ENT: Andes] [REL: country]), the store's memories resolve them, and the
    executed query's rows are the answer. When no resolution returns rows, pseudo-graph
    takes over: the LLM sketches the knowledge as Cypher, every piece is looked up in the
    semantic index, and the answer must be an entity or value of the store facts found.
    A name the store lacks is refused ("not in the store"), never guessed.
    It needs `kgstore index STORE` first. The LLM is configured in STORE/kgstore.toml [llm]
    (default: the packaged Qwen2.5-Coder-1.5B-Instruct GGUF, run in-process by llama.cpp).

    \b
    Examples:
      kgstore ask ./mystore "Which countries does the Andes cover?"
      kgstore ask ./mystore "Which countries does the Andes cover?" --method memq --trace
      kgstore ask ./mystore "Who covers more countries, the Andes or the Himalayas?" --method pseudo-graph
      kgstore ask ./mystore "..." --method qsm --format json
    """
    from qa.methods import DEFAULT_METHOD

    method = method or DEFAULT_METHOD
    if method not in _method_names():
        from kgstore.errors import UnknownMethodError

        raise UnknownMethodError(method, _method_names())
    st = open_store(ctx, store, read_only=True)
    llm = _load_llm(ctx, st)
    qa_method = _make_method(st, llm, method, _parse_options(options))
    with _status(f"answering with {method}..."):
        result = qa_method.answer(question, allow_parametric=allow_parametric)
    if fmt == "json":
        doc = result.to_dict(trace=True)
        click.echo(json.dumps(doc, ensure_ascii=False, indent=2, default=str))
        return
    _print_answer(result, st, trace=trace)


def _print_answer(result, store, *, trace: bool) -> None:
    from rich.console import Console

    from kgstore.terms import shorten

    console = Console(width=max(100, Console().width))
    prefixes = store.config.prefixes
    if result.refused:
        console.print(f"[bold yellow]Refused[/] ({result.refusal.reason}): {result.refusal.message}")
    else:
        flag = "  [magenta](from the model's own knowledge, not the store)[/]" if result.parametric else ""
        for label, iri in zip(result.answers, result.answer_iris):
            console.print(f"[bold green]Answer:[/] {label}" + (f"  [dim]{shorten(iri, prefixes)}[/]" if iri else "")
                          + flag)
    if result.evidence:
        rows = [{"subject": f"{e.s_label or ''} ({shorten(e.s, prefixes)})",
                 "relation": f"{e.p_label or ''} ({shorten(e.p, prefixes)})",
                 "object": e.o if e.literal else f"{e.o_label or ''} ({shorten(e.o, prefixes)})"}
                for e in result.evidence]
        emit_rows(rows, ["subject", "relation", "object"], "table", title="Evidence")
    t = result.tokens
    console.print(f"[dim]{result.method}: {result.seconds:.1f} s, {t.calls} LLM calls, "
                  f"{t.prompt} prompt + {t.completion} generated tokens[/]")
    if trace:
        console.rule("trace")
        console.print_json(json.dumps(result.trace, ensure_ascii=False, default=str))


@click.command("eval")
@STORE_ARG
@click.option("--dataset", "-d", type=click.Choice(["metaqa", "pathquestion", "wc2014"]), required=True,
              help="Benchmark: MetaQA (movies), PathQuestion (PQ-2H/3H) or WorldCup2014 (WC-P1/P2).")
@click.option("--hops", type=int, default=1, show_default=True,
              help="Question hops: MetaQA 1/2/3, PathQuestion 2/3, WorldCup2014 1/2.")
@click.option("--split", default="dev", show_default=True, help="Split file (MetaQA: dev; the others have none).")
@click.option("--method", "-m", "methods", multiple=True, metavar="NAME",
              help=_methods_help("QA method to score (repeat to compare side by side; default pseudo-graph)."))
@click.option("--limit", type=int, default=100, show_default=True, help="Questions to score (0 = all).")
@click.option("--sample", type=click.Choice(["spread", "head"]), default="spread", show_default=True,
              help="Which questions: evenly spread over the file, or the first ones.")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder holding metaqa/, pathquestion/, wc2014/ (default: ../shared/data/qa when present).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Report folder (default: ./eval-reports/DATASET-HOPShop-SPLIT).")
@click.option("--resume", is_flag=True, help="Reuse answers already in OUT/results-METHOD.jsonl.")
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
def eval_cmd(ctx, store, dataset, hops, split, methods, limit, sample, data_dir, out_dir, resume, allow_parametric,
             options, unanswerable, sweep_spec, fmt):
    """Score QA methods on a benchmark whose KB is loaded in STORE.

    \b
    Prints Hits@1, F1, refusal rate, hallucinated-identifier rate (answers whose IRI is not
    in the store), latency p50/p90 and tokens per question, and writes report.json (every
    question with its answers), report.md and report.png to OUT. Only MetaQA questions the
    partial KB can answer are scored (answerable_flags/). Each answer is saved as it
    completes, so an interrupted run continues with --resume.

    \b
    Examples (load the KB first: kgstore ingest ./metaqa tsv ../shared/data/qa/metaqa/kb_partial.txt,
    then kgstore index ./metaqa):
      kgstore eval ./metaqa --dataset metaqa --hops 1 --split dev -m io -m qsm -m pseudo-graph --limit 100
      kgstore eval ./metaqa --dataset metaqa --hops 1 -m pgmr --unanswerable --limit 50
      kgstore eval ./metaqa --dataset metaqa --hops 1 -m pgmr --sweep threshold=0.5:0.95:0.05 --limit 50
    """
    from qa.eval import read_dataset, run_eval, select_items, unanswerable_items, write_report
    from qa.llm import CachingLLM

    methods = list(methods) or ["pseudo-graph"]
    unknown = [m for m in methods if m not in _method_names()]
    if unknown:
        from kgstore.errors import UnknownMethodError

        raise UnknownMethodError(unknown[0], _method_names())
    data_dir = data_dir or default_data_dir()
    ds = read_dataset(dataset, hops=hops, split=split, data_dir=data_dir)
    items = select_items(ds.items, limit or None, sample=sample)
    out_dir = out_dir or Path("eval-reports") / f"{dataset}-{hops}hop-{split}{'-absent' if unanswerable else ''}"
    st = open_store(ctx, store, read_only=True)
    method_options = _parse_options(options)
    # the not-in-store versions are looked up in the store only when a run uses them
    absent = unanswerable_items(items, ds.items, lambda name: _store_has_name(st, name)) \
        if unanswerable or sweep_spec else []
    if unanswerable:
        ds.notes.append(f"not-in-store questions: {len(absent)} of {len(items)} with the topic entity renamed")
        items = absent
    # every completion is kept, so a later --sweep over the same questions reuses it
    llm = CachingLLM(_load_llm(ctx, st), out_dir / "llm-cache.jsonl", reuse=sweep_spec is not None)
    if sweep_spec:
        _run_sweep(st, llm, methods, items, absent, method_options, sweep_spec, out_dir, ds, fmt)
        return
    runs = []
    for name in methods:
        qa_method = _make_method(st, llm, name, method_options)
        with _eval_progress(name, len(items)) as on_progress:
            run = run_eval(qa_method, items, store=st, allow_parametric=allow_parametric,
                           results_path=out_dir / f"results-{name}.jsonl", resume=resume, progress=on_progress)
        run.params = {"allow_parametric": allow_parametric, **method_options}
        runs.append(run)
    meta = {"store": str(Path(store).resolve()), "dataset": ds.describe(), "questions": len(items), "sample": sample,
            "llm": llm.describe(), "methods": methods}
    paths = write_report(out_dir, runs, meta)
    if fmt == "json":
        click.echo(json.dumps({"summary": [{"method": r.method, **r.summary} for r in runs],
                               "report": {k: str(v) for k, v in paths.items()}}, indent=2))
        return
    from qa.eval._report import TABLE_COLUMNS, format_cell, summary_rows

    rows = [{h: format_cell(k, row.get(k)) for k, h in TABLE_COLUMNS} for row in summary_rows(runs)]
    emit_rows(rows, [h for _, h in TABLE_COLUMNS], "table",
              title=f"{dataset} {hops}-hop {split}: {len(items)} of {len(ds.items)} scorable questions")
    click.echo(f"report: {paths['md']}  {paths['json']}  {paths['png']}")


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
            normal = run_eval(_make_method(store, llm, name, options), items, store=store)
            lacking = run_eval(_make_method(store, llm, name, options), absent, store=store)
            rows.append(sweep_row(value, normal.summary, lacking.summary))
            stderr_console().print(f"{name} {sweep.key}={value}: Hits@1 {rows[-1]['hits@1']:.3f}, "
                                   f"refusal (not in store) {rows[-1]['refusal_not_in_store'] or 0:.3f}, "
                                   f"wrongful refusal {rows[-1]['wrongful_refusal']:.3f}")
        meta = {"store": str(store.path), "dataset": ds.describe(), "questions": len(items),
                "not_in_store_questions": len(absent), "title": f"{ds.name} {ds.hops}-hop {ds.split}",
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
    if not is_interactive():
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn(f"[bold]{method}[/]"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("Hits@1 {task.fields[hits]:.2f}  {task.fields[sec]:.1f} s/q"), TimeRemainingColumn(),
                  console=stderr_console()) as progress:
        task = progress.add_task(method, total=total, hits=0.0, sec=0.0)
        state = {"hits": 0.0, "sec": 0.0}

        def update(done, total_, record):
            state["hits"] += record["hits@1"]
            state["sec"] += record["seconds"]
            progress.update(task, completed=done, hits=state["hits"] / done, sec=state["sec"] / done)

        yield update
