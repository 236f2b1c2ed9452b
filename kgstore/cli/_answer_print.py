"""One answer as `kgstore ask` prints it: JSON (`--format json`), or for people the
answers (or the paragraph of an open answer with the facts it cites), the entities meant,
the constraints, the evidence and the time. From several stores, every answer, fact and
evidence triple shows its store, and a namesake the stores do not join is said to be
held apart."""
from __future__ import annotations

import json

import click

from ._common import emit_rows


def show_answer(doc: dict, fmt: str, *, trace: bool, prefixes: dict[str, str]) -> None:
    """An answer's JSON (`--format json`) as JSON, or as the table people read."""
    if fmt == "json":
        click.echo(json.dumps(doc, ensure_ascii=False, indent=2, default=str))
        return
    print_answer(doc, prefixes, trace=trace)


def print_answer(doc: dict, prefixes: dict[str, str], *, trace: bool) -> None:
    from rich.console import Console
    from rich.markup import escape  # a message or a label may hold "[...]" that rich would eat

    from kgstore.terms import shorten

    console = Console(width=max(100, Console().width))
    if doc.get("text") is not None:
        print_open_answer(doc, console, prefixes)
    elif doc["refused"]:
        console.print(f"[bold yellow]Refused[/] ({escape(doc['refusal']['reason'])}): "
                      f"{escape(doc['refusal']['message'])}")
    else:
        flag = "  [magenta](from the model's own knowledge, not the store)[/]" if doc.get("parametric") else ""
        shape = f"  [dim]({escape(doc['shape'])})[/]" if doc.get("shape") else ""
        stores = doc.get("answer_stores") or [None] * len(doc["answers"])
        for label, iri, held in zip(doc["answers"], doc["answer_iris"], stores):
            console.print(f"[bold green]Answer:[/] {escape(str(label))}"
                          + (f"  [dim]{escape(shorten(iri, prefixes))}[/]" if iri else "")
                          + (f"  [cyan]from {escape(', '.join(held))}[/]" if held else "")
                          + flag + shape)
    print_stores(doc, console)
    if doc.get("meant") and not (doc.get("text") is not None and doc.get("by_store")):
        # which entity each name was read as: a namesake shows here (an open answer from
        # several stores says it in its store lines)
        console.print("[dim]Read as:[/] " + "; ".join(escape(_meant(m, prefixes)) for m in doc["meant"]))
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
                 else f"{e['o_label'] or ''} ({shorten(e['o'], prefixes)})",
                 **({"store": e["store"]} if e.get("store") else {})}
                for e in doc["evidence"]]
        emit_rows(rows, list(rows[0]), "table", title="Evidence")
    t = doc["tokens"]
    console.print(f"[dim]{doc['method']}: {doc['seconds']:.1f} s, {t['calls']} LLM calls, "
                  f"{t['prompt']} prompt + {t['completion']} generated tokens[/]")
    if trace:
        console.rule("trace")
        console.print_json(json.dumps(doc.get("trace", {}), ensure_ascii=False, default=str))


def print_open_answer(doc: dict, console, prefixes: dict[str, str]) -> None:
    """An open answer: the paragraph, each sentence with its citations, then the facts cited
    (each with its store triples' subject IRI, and its stores when there are several)."""
    from rich.markup import escape

    from kgstore.terms import shorten

    console.print(f"[bold green]Answer:[/] {escape(doc['text'])}")
    rows = []
    for fact in doc.get("facts") or []:
        first = (fact.get("evidence") or [{}])[0]
        rows.append({"#": f"[{fact['n']}]", "subject": fact["subject"], "relation": fact["relation"],
                     "value": "; ".join(fact["values"]),
                     "about": shorten(first.get("s", ""), prefixes) if first else "",
                     **({"store": ", ".join(fact.get("stores") or [fact["store"]])} if fact.get("store") else {})})
    if rows:
        emit_rows(rows, list(rows[0]), "table", title="Facts cited")


def print_stores(doc: dict, console) -> None:
    """From several stores: what each store gave, one line each."""
    from rich.markup import escape

    for entry in doc.get("by_store") or []:
        if "as" in entry:  # an open answer: the entity each store holds, and how it was taken
            said = f"{entry['as']}" + (f": {entry['label']} ({entry['entity']})" if entry.get("entity") else "")
            if entry["as"] == "held apart":
                said += ", a namesake no store says is the same entity; none of its facts is used"
        elif entry.get("refused"):
            said = f"refused ({entry['refusal']['reason']}): {entry['refusal']['message']}"
        else:
            said = f"{len(entry['answers'])} answer(s)"
        console.print(f"[dim]Store {escape(entry['store'])}:[/] {escape(said)}")


def _meant(m: dict, prefixes: dict[str, str]) -> str:
    from kgstore.terms import shorten

    text = f"{m['label']} ({shorten(m['iri'], prefixes)}" + (f", {m['description']}" if m.get("description") else "")
    return text + (f", in {m['store']}" if m.get("store") else "") + ")"
