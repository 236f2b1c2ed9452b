"""`kgstore ask`: one question from the store (or from a running `kgstore serve`), with the
evidence it rests on, or a refusal; many questions go to :mod:`._ask_many`."""
from __future__ import annotations

import click

from ._answer_print import show_answer
from ._ask_many import ask_many
from ._ask_targets import ask_targets
from ._common import format_option, open_store
from ._qa import checked_method, load_llm, method_over_stores, methods_help, parse_options, status


@click.command("ask")
@click.argument("targets", nargs=-1, metavar="[STORE...] [QUESTION]")
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
    """Answer QUESTION from STORE (or from several stores), with the evidence triples it
    rests on, or refuse.

    \b
    Which to use when:
      one question         kgstore ask STORE "QUESTION"
                           loads the model for this one question: about 10-50 s in all
      many questions       kgstore ask STORE --questions FILE
                           loads the model once, then 5-7 s a question; one JSON answer a
                           line to FILE.answers.jsonl; after Ctrl-C, --resume asks the rest
      a running server     kgstore ask --server URL "QUESTION"   (also with --questions FILE)
                           no model load here: `kgstore serve STORE` keeps its model warm
      several stores       kgstore ask STORE1 STORE2 "QUESTION"   (also with --questions FILE)
                           every argument before the question is a store; the answer
                           reads them all, and marks each fact with its store

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
    Several stores: an open question is answered from the union of the stores' facts
    about the entity. An entity is one across stores only where a store says so (the same
    IRI, owl:sameAs, or Wikidata's Freebase ID P646 against a Freebase m. IRI); a namesake
    no store joins is held apart. A precise question runs the method on each store and
    lists each answer with the stores that gave it. Stores are named after their directory.

    \b
    Examples:
      kgstore ask ./mystore "Which countries does the Andes cover?"
      kgstore ask ./mystore "Which countries does the Andes cover?" --method memq --trace
      kgstore ask ./mystore "Who covers more countries, the Andes or the Himalayas?" --method pseudo-graph
      kgstore ask ./mystore "..." --method qsm --format json
      kgstore ask ./mystore "Tell me about Douglas Adams" --format json   # text, sentences, facts
      kgstore ask ./wikidata ./freebase "Tell me about Douglas Adams"    # facts of both, marked
      kgstore ask ./mystore --questions questions.txt          # answers in questions.answers.jsonl
      kgstore ask ./mystore --questions questions.txt --resume # after Ctrl-C: ask only the rest
      kgstore ask ./mystore --questions qs.jsonl --out - | jq -r .answers[0]
      kgstore ask --server http://127.0.0.1:7878 "Which countries does the Andes cover?"
      KGSTORE_TOKEN=s3cret kgstore ask --server http://kg.lan:7878 --questions questions.txt
    """
    many = questions_file is not None
    stores, question = ask_targets(targets, server=server, many=many)
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
            show_answer(doc, fmt, trace=trace, prefixes=client.prefixes() if fmt == "table" else {})
        return
    method = checked_method(method)
    opened = [open_store(ctx, store, read_only=True) for store in stores]  # a path that is no store fails here

    def local_asker():  # the model loads here, once, and only when a question needs it
        qa_method = method_over_stores(stores, opened, load_llm(ctx, opened[0]), method, method_options)
        return lambda text: qa_method.answer(text, allow_parametric=allow_parametric).to_dict(trace=True)

    if many:
        ask_many(ctx, questions_file, out, resume, local_asker, label=method)
        return
    ask = local_asker()
    with status(f"answering with {method}..."):
        doc = ask(question)
    prefixes = {p: ns for st in reversed(opened) for p, ns in st.config.prefixes.items()}  # the first store's win
    show_answer(doc, fmt, trace=trace, prefixes=prefixes)




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
