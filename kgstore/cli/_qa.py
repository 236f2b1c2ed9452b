"""`kgstore ask` and `kgstore eval`: question answering from the store, and its scores."""
from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

import click

from ._common import STORE_ARG, emit_rows, format_option, is_interactive, open_store, progress_bar, stderr_console


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
@click.argument("targets", nargs=-1, metavar="[STORE] [QUESTION]")
@click.option("--questions", "questions_file", metavar="FILE",
              type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=str),
              help="Ask every question of FILE, loading the model once: one question a line, as plain text or "
                   'JSONL ({"question": "...", "id": "q1"}); empty lines and # comments are skipped. '
                   "Writes one JSON answer a line to --out. FILE may be - (stdin).")
@click.option("--out", metavar="FILE", default=None,
              help="Where --questions writes its answers (default: FILE with the suffix .answers.jsonl; "
                   "stdout when the questions come from stdin). - is stdout (nothing to resume then).")
@click.option("--resume", is_flag=True,
              help="Continue a --questions run that stopped: keep the answers already in --out, ask only the rest.")
@click.option("--server", metavar="URL", default=None,
              help="Send the question(s) to a running `kgstore serve` at URL (its model is already loaded) "
                   "instead of loading the model here; no STORE then.")
@click.option("--token", envvar="KGSTORE_TOKEN", default=None, metavar="TOKEN",
              help="With --server: the server's token, sent as 'Authorization: Bearer TOKEN' (or set KGSTORE_TOKEN).")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0.1), default=300.0, show_default=True,
              metavar="SECONDS",
              help="With --server: seconds to wait for each answer (questions queue there for its one model).")
@click.option("--method", "-m", default=None, metavar="NAME",
              help=_methods_help("QA method (default cascade: pgmr, then pseudo-graph when pgmr finds no rows)."))
@click.option("--trace", is_flag=True, help="Show every intermediate step (prompts, outputs, retrieval, pruning).")
@click.option("--allow-parametric", is_flag=True,
              help="When the store has no answer, let the model answer from its own knowledge (flagged as such).")
@click.option("--option", "-o", "options", multiple=True, metavar="KEY=VALUE",
              help="A method option, e.g. -o threshold=0.6 -o top_k=10 (repeatable).")
@format_option("table", "json")
@click.pass_context
def ask_cmd(ctx, targets, questions_file, out, resume, server, token, timeout_s, method, trace, allow_parametric,
            options, fmt):
    """Answer QUESTION from STORE, with the evidence triples it rests on, or refuse.

    \b
    Which to use when:
      one question         kgstore ask STORE "QUESTION"
                           loads the model for this one question: about 10-50 s in all
      many questions       kgstore ask STORE --questions FILE
                           loads the model once, then 5-7 s a question; one JSON answer a
                           line to FILE.answers.jsonl; after Ctrl-C, --resume asks the rest
      a running server     kgstore ask --server URL "QUESTION"   (also with --questions FILE)
                           no model load here: `kgstore serve STORE` keeps its model warm

    \b
    The default method, cascade, runs pgmr first: the local LLM writes the question's SPARQL
    with placeholders ([ENT: Andes] [REL: country]), the store's memories resolve them, and
    the executed query's rows are the answer. When no resolution returns rows, pseudo-graph
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
      kgstore ask ./mystore --questions questions.txt          # answers in questions.answers.jsonl
      kgstore ask ./mystore --questions questions.txt --resume # after Ctrl-C: ask only the rest
      kgstore ask ./mystore --questions qs.jsonl --out - | jq -r .answers[0]
      kgstore ask --server http://127.0.0.1:7878 "Which countries does the Andes cover?"
      KGSTORE_TOKEN=s3cret kgstore ask --server http://kg.lan:7878 --questions questions.txt
    """
    many = questions_file is not None
    store, question = _ask_targets(targets, server=server, many=many)
    _check_ask_options(ctx, server=server, many=many, out=out, resume=resume, trace=trace, fmt=fmt)
    method_options = _parse_options(options)
    if server:
        from ._remote import AskClient

        with AskClient(server, token=token, timeout_s=timeout_s) as client:
            def ask(text: str) -> dict:
                return client.ask(text, method=method, options=method_options, allow_parametric=allow_parametric)

            if many:
                _ask_many(ctx, questions_file, out, resume, lambda: ask, label=f"{method or 'ask'} @ {client.url}")
                return
            with _status(f"asking {client.url}..."):
                doc = ask(question)
            _show_answer(doc, fmt, trace=trace, prefixes=client.prefixes() if fmt == "table" else {})
        return
    method = _checked_method(method)
    st = open_store(ctx, store, read_only=True)

    def local_asker():  # the model loads here, once, and only when a question needs it
        qa_method = _make_method(st, _load_llm(ctx, st), method, method_options)
        return lambda text: qa_method.answer(text, allow_parametric=allow_parametric).to_dict(trace=True)

    if many:
        _ask_many(ctx, questions_file, out, resume, local_asker, label=method)
        return
    ask = local_asker()
    with _status(f"answering with {method}..."):
        doc = ask(question)
    _show_answer(doc, fmt, trace=trace, prefixes=st.config.prefixes)


def _checked_method(method: str | None) -> str:
    from qa.methods import DEFAULT_METHOD

    method = method or DEFAULT_METHOD
    if method not in _method_names():
        from kgstore.errors import UnknownMethodError

        raise UnknownMethodError(method, _method_names())
    return method


def _ask_targets(targets: tuple[str, ...], *, server: str | None, many: bool) -> tuple[str | None, str | None]:
    """STORE and QUESTION from the positional arguments: ``STORE QUESTION``; ``STORE`` with
    --questions; ``QUESTION`` with --server; nothing with both. STORE may come from
    KGSTORE_PATH instead."""
    args = list(targets)
    if len(args) > 2:
        raise click.UsageError(f"{len(args)} arguments where at most STORE and QUESTION go: put the question "
                               'in quotes, e.g. kgstore ask ./mystore "Which countries does the Andes cover?"')
    if server:
        if many and args:
            raise click.UsageError("with --server and --questions, give no STORE or QUESTION: the server answers "
                                   "every question of FILE from its own store")
        if not many and len(args) == 2:
            raise click.UsageError("with --server, the server answers from its own store: drop STORE "
                                   '(kgstore ask --server URL "QUESTION")')
        if not many and not args:
            raise click.UsageError('give the QUESTION to send (kgstore ask --server URL "QUESTION"), '
                                   "or --questions FILE")
        return None, (args[0] if args else None)
    env_store = os.environ.get("KGSTORE_PATH")
    if many:
        if len(args) == 2:
            raise click.UsageError("give either QUESTION or --questions FILE, not both")
        if args or env_store:
            return (args[0] if args else env_store), None
        raise click.UsageError("give the STORE to answer from (kgstore ask STORE --questions FILE), "
                               "or --server URL to ask a running `kgstore serve`")
    if len(args) == 2:
        return args[0], args[1]
    if len(args) == 1 and env_store:
        return env_store, args[0]
    raise click.UsageError(f"missing {'QUESTION' if args else 'STORE and QUESTION'}: "
                           'kgstore ask STORE "QUESTION" (many questions: --questions FILE; '
                           "a running server: --server URL)")


def _check_ask_options(ctx, *, server, many, out, resume, trace, fmt) -> None:
    """Options that belong to another way of asking are refused, never silently ignored."""
    from click.core import ParameterSource

    def given(name: str) -> bool:
        return ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE

    if not server:
        for name, flag in (("token", "--token"), ("timeout_s", "--timeout")):
            if given(name):
                raise click.UsageError(f"{flag} goes with --server URL (a running `kgstore serve`)")
    if not many and (out is not None or resume):
        raise click.UsageError(f"{'--out' if out is not None else '--resume'} goes with --questions FILE")
    if many and trace:
        raise click.UsageError("--trace shows one answer's steps; with --questions every answer line holds "
                               "its trace already")
    if many and given("fmt") and fmt != "json":
        raise click.UsageError("--questions writes one JSON answer a line; --format table does not apply")


# -- many questions -------------------------------------------------------------------------------
def _ask_many(ctx, questions_file: str, out: str | None, resume: bool, make_asker, *, label: str) -> None:
    """Answer every question of ``questions_file`` with the asker ``make_asker()`` returns
    (a function: question -> answer JSON), made only when a question is left to ask. Each
    answer is written as one JSON line as soon as it is done; with --resume, the lines
    already in ``out`` are kept and their questions not asked again."""
    from qa.eval import ResultsLog, read_results

    from ._questions import read_questions

    out = out or ("-" if questions_file == "-" else str(_default_answers_path(questions_file)))
    try:
        with click.open_file(questions_file, encoding="utf-8-sig") as f:
            items, _ = read_questions(f)
    except UnicodeDecodeError as exc:
        raise click.BadParameter(f"{questions_file} is not UTF-8 text ({exc.reason} at byte {exc.start})",
                                 param_hint="--questions") from exc
    source = "stdin" if questions_file == "-" else questions_file
    if out == "-":
        if resume:
            raise click.UsageError("--resume needs the answers in a file (--out FILE): stdout keeps nothing "
                                   "to resume from")
        done: dict = {}

        def write(record: dict) -> None:
            click.echo(json.dumps(record, ensure_ascii=False, default=str))
    else:
        if questions_file != "-" and Path(out).resolve() == Path(questions_file).resolve():
            raise click.UsageError("--out is the questions file itself; choose another file for the answers")
        if not resume and (earlier := read_results(out)):
            raise click.UsageError(f"{out} already holds {len(earlier)} answer(s): add --resume to keep them and "
                                   "ask only the rest, or remove it (or choose another --out) to start over")
        try:
            log = ResultsLog(out, resume=resume)
        except OSError as exc:
            raise click.FileError(out, exc.strerror or str(exc)) from exc
        done = {_record_key(r): r for r in log.records}
        write = log.append
    pending = [item for item in items if not _answered(item, done.get(item.key))]
    resumed = len(items) - len(pending)
    if not pending:
        _say(f"all {len(items)} question(s) of {source} have answers in {out}; nothing to ask"
             if items else f"no questions in {source} (empty lines and # comments are skipped)")
        return
    ask = make_asker()
    tally = {"answered": 0, "refused": 0, "errors": 0, "seconds": 0.0}
    started = time.monotonic()
    try:
        with progress_bar(label, len(items), "{task.fields[refused]} refused  {task.fields[errors]} errors  "
                          "{task.fields[sec]:.1f} s/q", done=resumed, refused=0, errors=0, sec=0.0) as update:
            for n, item in enumerate(pending, start=1):
                record = _answer_record(item, ask, source)
                write(record)
                _count(tally, record)
                update(resumed + n, refused=tally["refused"], errors=tally["errors"], sec=tally["seconds"] / n)
    except KeyboardInterrupt:
        kept = resumed + tally["answered"] + tally["errors"]
        if out == "-":
            _say(f"interrupted after {kept} of {len(items)} answers; to be able to resume, write them to a file "
                 "with --out FILE")
        else:
            _say(f"interrupted: {kept} of {len(items)} questions have answers in {out}; run the same command with "
                 f"--resume to ask the other {len(items) - kept}")
        ctx.exit(130)
    where = "stdout" if out == "-" else out
    _say(f"{len(pending)} line(s) done in {time.monotonic() - started:.0f} s: {tally['answered']} answered "
         f"({tally['refused']} refused), {tally['errors']} error(s)"
         + (f"; {resumed} kept from before" if resumed else "") + f"; answers in {where}")


def _default_answers_path(questions_file: str) -> Path:
    """``questions.txt`` -> ``questions.answers.jsonl``, beside it."""
    path = Path(questions_file)
    return path.with_name(f"{path.stem if path.suffix else path.name}.answers.jsonl")


def _record_key(record: dict) -> tuple:
    """A written answer's key, the same as its question line's ``key``."""
    return ("id", record["id"]) if record.get("id") is not None else ("line", record.get("line"))


def _answered(item, record: dict | None) -> bool:
    """Whether ``record`` answers this very line: a line edited since is asked again."""
    return record is not None and record.get("question") == item.question


def _answer_record(item, ask, source: str) -> dict:
    """One output line: where the question came from, then the answer JSON of `kgstore ask
    --format json` (or, for a line that could not be asked, the error)."""
    from kgstore.errors import KgstoreError, MalformedRecordError

    head = {"line": item.line, "id": item.id, "question": item.question}
    if item.error is not None:
        return {**head, "error": _error_doc(MalformedRecordError(source, item.line, item.error))}
    try:
        doc = ask(item.question)
    except KgstoreError as exc:
        if not _fails_one_question(exc):
            raise
        return {**head, "error": _error_doc(exc)}
    return {**head, **doc, "error": None}


def _error_doc(exc: Exception) -> dict:
    return {"type": type(exc).__name__, "message": str(exc)}


def _fails_one_question(exc: Exception) -> bool:
    """Whether ``exc`` concerns this question only (it is written as the question's answer
    and the run goes on), rather than every question (the run stops, resumable)."""
    from kgstore.errors import QAError, ServerRefusedError, UnknownMethodError, UnknownOptionError

    run_wide = ("UnknownMethodError", "UnknownOptionError")
    if isinstance(exc, ServerRefusedError):
        return exc.status in (400, 413) and exc.error_type not in run_wide  # a bad or too long question
    return isinstance(exc, QAError) and not exc.transient and not isinstance(exc, (UnknownMethodError,
                                                                                    UnknownOptionError))


def _count(tally: dict, record: dict) -> None:
    if record.get("error"):
        tally["errors"] += 1
        return
    tally["answered"] += 1
    tally["refused"] += bool(record.get("refused"))
    tally["seconds"] += record.get("seconds") or 0.0


def _say(message: str) -> None:
    click.echo(message, err=True)


# -- one answer -----------------------------------------------------------------------------------
def _show_answer(doc: dict, fmt: str, *, trace: bool, prefixes: dict[str, str]) -> None:
    """An answer's JSON (`--format json`) as JSON, or as the table people read."""
    if fmt == "json":
        click.echo(json.dumps(doc, ensure_ascii=False, indent=2, default=str))
        return
    _print_answer(doc, prefixes, trace=trace)


def _print_answer(doc: dict, prefixes: dict[str, str], *, trace: bool) -> None:
    from rich.console import Console

    from kgstore.terms import shorten

    console = Console(width=max(100, Console().width))
    if doc["refused"]:
        console.print(f"[bold yellow]Refused[/] ({doc['refusal']['reason']}): {doc['refusal']['message']}")
    else:
        flag = "  [magenta](from the model's own knowledge, not the store)[/]" if doc.get("parametric") else ""
        for label, iri in zip(doc["answers"], doc["answer_iris"]):
            console.print(f"[bold green]Answer:[/] {label}" + (f"  [dim]{shorten(iri, prefixes)}[/]" if iri else "")
                          + flag)
    if doc.get("evidence"):
        rows = [{"subject": f"{e['s_label'] or ''} ({shorten(e['s'], prefixes)})",
                 "relation": f"{e['p_label'] or ''} ({shorten(e['p'], prefixes)})",
                 "object": e["o"] if e["literal"] else f"{e['o_label'] or ''} ({shorten(e['o'], prefixes)})"}
                for e in doc["evidence"]]
        emit_rows(rows, ["subject", "relation", "object"], "table", title="Evidence")
    t = doc["tokens"]
    console.print(f"[dim]{doc['method']}: {doc['seconds']:.1f} s, {t['calls']} LLM calls, "
                  f"{t['prompt']} prompt + {t['completion']} generated tokens[/]")
    if trace:
        console.rule("trace")
        console.print_json(json.dumps(doc.get("trace", {}), ensure_ascii=False, default=str))


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
              help=_methods_help("QA method to score (repeat to compare side by side; default pseudo-graph)."))
@click.option("--limit", type=int, default=100, show_default=True, help="Questions to score (0 = all).")
@click.option("--sample", type=click.Choice(["spread", "head"]), default="spread", show_default=True,
              help="Which questions: evenly spread over the file, or the first ones.")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder holding metaqa/, pathquestion/, wc2014/ (default: ../shared/data/qa when present).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Report folder (default: ./eval-reports/DATASET-HOPShop-SPLIT, or ./eval-reports/FILE-NAME "
                   "with --questions).")
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
def eval_cmd(ctx, store, dataset, questions_file, questions_format, language, gold_from_sparql, hops, split, methods,
             limit, sample, data_dir, out_dir, resume, allow_parametric, options, unanswerable, sweep_spec, fmt):
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
      kgstore eval ./mystore --questions my-questions.tsv -m cascade --limit 0
      kgstore eval ./wikidata --questions qald_10.json --language de -m pgmr
      kgstore eval ./mystore --questions qald_10.json --gold-from-sparql -m pgmr --limit 0
    """
    from qa.eval import read_dataset, run_eval, select_items, unanswerable_items, write_report
    from qa.llm import CachingLLM

    _check_eval_source(ctx, dataset, questions_file)
    methods = list(methods) or ["pseudo-graph"]
    unknown = [m for m in methods if m not in _method_names()]
    if unknown:
        from kgstore.errors import UnknownMethodError

        raise UnknownMethodError(unknown[0], _method_names())
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
    for method_name in methods:
        qa_method = _make_method(st, llm, method_name, method_options)
        with _eval_progress(method_name, len(items)) as on_progress:
            run = run_eval(qa_method, items, store=st, allow_parametric=allow_parametric,
                           results_path=out_dir / f"results-{method_name}.jsonl", resume=resume,
                           progress=on_progress)
        run.params = {"allow_parametric": allow_parametric, **method_options}
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
            normal = run_eval(_make_method(store, llm, name, options), items, store=store)
            lacking = run_eval(_make_method(store, llm, name, options), absent, store=store)
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
