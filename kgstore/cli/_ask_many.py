"""`kgstore ask --questions FILE`: every question of a file with one model load, one JSON
answer a line, resumable after Ctrl-C."""
from __future__ import annotations

import json
import time
from pathlib import Path

import click

from ._common import progress_bar


# -- many questions -------------------------------------------------------------------------------
def ask_many(ctx, questions_file: str, out: str | None, resume: bool, make_asker, *, label: str) -> None:
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
