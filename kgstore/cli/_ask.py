"""`kgstore ask`: one question from the store (or from a running `kgstore serve`), with the
evidence it rests on, or a refusal; many questions go to :mod:`._ask_many`."""
from __future__ import annotations

import json
import os

import click

from ._ask_many import ask_many
from ._common import emit_rows, format_option, open_store
from ._qa import checked_method, load_llm, make_method, methods_help, parse_options, status


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
              help=methods_help("QA method (default cascade: pgmr, then pseudo-graph when pgmr finds no rows)."))
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
    An open question ("Tell me about X", "What do you know about X?", "Describe X",
    "Why is X famous?") gets 1-6 sentences written from verified store facts, each citing
    the facts it rests on, whatever the method; see docs/open-answers.md.

    \b
    Examples:
      kgstore ask ./mystore "Which countries does the Andes cover?"
      kgstore ask ./mystore "Which countries does the Andes cover?" --method memq --trace
      kgstore ask ./mystore "Who covers more countries, the Andes or the Himalayas?" --method pseudo-graph
      kgstore ask ./mystore "..." --method qsm --format json
      kgstore ask ./mystore "Tell me about Douglas Adams" --format json   # text, sentences, facts
      kgstore ask ./mystore --questions questions.txt          # answers in questions.answers.jsonl
      kgstore ask ./mystore --questions questions.txt --resume # after Ctrl-C: ask only the rest
      kgstore ask ./mystore --questions qs.jsonl --out - | jq -r .answers[0]
      kgstore ask --server http://127.0.0.1:7878 "Which countries does the Andes cover?"
      KGSTORE_TOKEN=s3cret kgstore ask --server http://kg.lan:7878 --questions questions.txt
    """
    many = questions_file is not None
    store, question = _ask_targets(targets, server=server, many=many)
    _check_ask_options(ctx, server=server, many=many, out=out, resume=resume, trace=trace, fmt=fmt)
    method_options = parse_options(options)
    if server:
        from ._remote import AskClient

        with AskClient(server, token=token, timeout_s=timeout_s) as client:
            def ask(text: str) -> dict:
                return client.ask(text, method=method, options=method_options, allow_parametric=allow_parametric)

            if many:
                ask_many(ctx, questions_file, out, resume, lambda: ask, label=f"{method or 'ask'} @ {client.url}")
                return
            with status(f"asking {client.url}..."):
                doc = ask(question)
            _show_answer(doc, fmt, trace=trace, prefixes=client.prefixes() if fmt == "table" else {})
        return
    method = checked_method(method)
    st = open_store(ctx, store, read_only=True)

    def local_asker():  # the model loads here, once, and only when a question needs it
        qa_method = make_method(st, load_llm(ctx, st), method, method_options)
        return lambda text: qa_method.answer(text, allow_parametric=allow_parametric).to_dict(trace=True)

    if many:
        ask_many(ctx, questions_file, out, resume, local_asker, label=method)
        return
    ask = local_asker()
    with status(f"answering with {method}..."):
        doc = ask(question)
    _show_answer(doc, fmt, trace=trace, prefixes=st.config.prefixes)




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


# -- one answer -----------------------------------------------------------------------------------
def _show_answer(doc: dict, fmt: str, *, trace: bool, prefixes: dict[str, str]) -> None:
    """An answer's JSON (`--format json`) as JSON, or as the table people read."""
    if fmt == "json":
        click.echo(json.dumps(doc, ensure_ascii=False, indent=2, default=str))
        return
    _print_answer(doc, prefixes, trace=trace)


def _print_answer(doc: dict, prefixes: dict[str, str], *, trace: bool) -> None:
    from rich.console import Console
    from rich.markup import escape  # a message or a label may hold "[...]" that rich would eat

    from kgstore.terms import shorten

    console = Console(width=max(100, Console().width))
    if doc.get("text") is not None:
        _print_open_answer(doc, console, prefixes)
    elif doc["refused"]:
        console.print(f"[bold yellow]Refused[/] ({escape(doc['refusal']['reason'])}): "
                      f"{escape(doc['refusal']['message'])}")
    else:
        flag = "  [magenta](from the model's own knowledge, not the store)[/]" if doc.get("parametric") else ""
        shape = f"  [dim]({escape(doc['shape'])})[/]" if doc.get("shape") else ""
        for label, iri in zip(doc["answers"], doc["answer_iris"]):
            console.print(f"[bold green]Answer:[/] {escape(str(label))}"
                          + (f"  [dim]{escape(shorten(iri, prefixes))}[/]" if iri else "")
                          + flag + shape)
    if doc.get("meant"):
        # which entity each name was read as: a namesake shows here
        console.print("[dim]Read as:[/] " + "; ".join(
            escape(f"{m['label']} ({shorten(m['iri'], prefixes)}"
                   + (f", {m['description']}" if m.get("description") else "") + ")") for m in doc["meant"]))
    for c in doc.get("constraints") or []:
        # every constraint the question writes is applied, or the answer says it was not
        said = (escape(f"applied along {c.get('relation')}") if c.get("applied")
                else "[yellow]not applied[/]: " + escape(c.get("why", "")))
        console.print(f"[dim]Constraint:[/] {escape(str(c['constraint']))} — {said}")
    if doc.get("evidence") and doc.get("text") is None:
        from qa import literal_value

        rows = [{"subject": f"{e['s_label'] or ''} ({shorten(e['s'], prefixes)})",
                 "relation": f"{e['p_label'] or ''} ({shorten(e['p'], prefixes)})",
                 "object": literal_value(e["o"], e.get("datatype")).text if e["literal"]
                 else f"{e['o_label'] or ''} ({shorten(e['o'], prefixes)})"}
                for e in doc["evidence"]]
        emit_rows(rows, ["subject", "relation", "object"], "table", title="Evidence")
    t = doc["tokens"]
    console.print(f"[dim]{doc['method']}: {doc['seconds']:.1f} s, {t['calls']} LLM calls, "
                  f"{t['prompt']} prompt + {t['completion']} generated tokens[/]")
    if trace:
        console.rule("trace")
        console.print_json(json.dumps(doc.get("trace", {}), ensure_ascii=False, default=str))


def _print_open_answer(doc: dict, console, prefixes: dict[str, str]) -> None:
    """An open answer: the paragraph, each sentence with its citations, then the facts cited
    (each with its store triples' subject IRI, and its store when there are several)."""
    from rich.markup import escape

    from kgstore.terms import shorten

    console.print(f"[bold green]Answer:[/] {escape(doc['text'])}")
    rows = []
    for fact in doc.get("facts") or []:
        first = (fact.get("evidence") or [{}])[0]
        rows.append({"#": f"[{fact['n']}]", "subject": fact["subject"], "relation": fact["relation"],
                     "value": "; ".join(fact["values"]),
                     "about": shorten(first.get("s", ""), prefixes) if first else "",
                     **({"store": fact["store"]} if fact.get("store") else {})})
    if rows:
        emit_rows(rows, list(rows[0]), "table", title="Facts cited")
