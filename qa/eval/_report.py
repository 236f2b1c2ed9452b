"""Write an evaluation's report: ``report.json`` (everything), ``report.md`` (the table and
settings for people) and ``report.png`` (scores and latency per method)."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

from ._harness import EvalRun

TABLE_COLUMNS = [
    ("method", "method"), ("questions", "n"), ("hits@1", "Hits@1"), ("f1", "F1"),
    ("refusal_rate", "refusals"), ("hallucinated_identifier_rate", "halluc. IRIs"),
    ("latency_p50_s", "p50 s"), ("latency_p90_s", "p90 s"), ("tokens_mean", "tokens/q"),
]


def summary_rows(runs: Sequence[EvalRun]) -> list[dict]:
    return [{"method": run.method, **run.summary} for run in runs]


def format_cell(key: str, value) -> str:
    if value is None:
        return "–"
    if key in ("hits@1", "f1", "refusal_rate", "hallucinated_identifier_rate"):
        return f"{value:.3f}"
    if key.startswith("latency"):
        return f"{value:.1f}"
    if key == "tokens_mean":
        return f"{value:.0f}"
    return str(value)


def markdown_report(runs: Sequence[EvalRun], meta: dict) -> str:
    ds = meta["dataset"]
    lines = [f"# kgstore eval: {_title(ds)}", ""]
    lines += [f"- store: `{meta['store']}`", f"- model: `{json.dumps(meta['llm'])}`",
              (f"- questions: {meta['questions']} of the file's {ds['questions']} ({meta['sample']} sample)"
               if ds.get("format") else
               f"- questions: {meta['questions']} of {ds['questions']} scorable ({meta['sample']} sample)"),
              f"- started: {meta['started']}"]
    if ds.get("unanswerable_skipped"):
        lines.append(f"- not scored: {ds['unanswerable_skipped']} questions the store's KB cannot answer")
    lines += [f"- note: {n}" for n in ds.get("notes", [])]
    unscorable = max((r.summary.get("unscorable", 0) for r in runs), default=0)
    if unscorable:
        lines.append(f"- unscorable: {unscorable} questions (no gold answers, or a gold query that failed; "
                     "each with its reason in report.json), left out of every score")
    lines += ["", "| " + " | ".join(h for _, h in TABLE_COLUMNS) + " |",
              "|" + "|".join("---" for _ in TABLE_COLUMNS) + "|"]
    for row in summary_rows(runs):
        lines.append("| " + " | ".join(format_cell(k, row.get(k)) for k, _ in TABLE_COLUMNS) + " |")
    typed = ds.get("format") is not None
    lines += ["", ("Hits@1: the first answer is a gold answer (compared by kind: entities by IRI or label, "
                   "numbers, booleans and dates by value, dates at the gold's precision). " if typed else
                   "Hits@1: the first answer is a gold answer (labels compared after normalisation). ")
              + "F1: over answer sets. Refusals count as wrong. Hallucinated IRIs: share of questions "
              "with an answer IRI that does not exist in the store. Latency is wall-clock seconds per question."]
    shape_lines = shape_table(runs)
    if shape_lines:
        lines += ["", "## Per shape", ""] + shape_lines
    failures = [(r.method, r.summary.get("failures") or {}) for r in runs]
    if any(f for _, f in failures):
        # what the next change should target (qa/eval/_failures.py says what each kind means)
        lines += ["", "## Failures by kind", ""]
        lines += [f"- {method}: " + ", ".join(f"{kind} {n}" for kind, n in counts.items())
                  for method, counts in failures if counts]
    lines += ["", "![scores](report.png)", ""]
    return "\n".join(lines)


def _title(ds: dict) -> str:
    return ds.get("title") or f"{ds['name']} {ds['hops']}-hop {ds['split']}"


def shape_table(runs: Sequence[EvalRun]) -> list[str]:
    """Markdown lines of the per-shape table (n, then Hits@1 and F1 for each method);
    none when no run has shapes."""
    shapes: list[str] = []
    for run in runs:
        shapes += [s for s in run.summary.get("by_shape", {}) if s not in shapes]
    if not shapes:
        return []
    head = ["shape", "n"] + [f"{r.method} {m}" for r in runs for m in ("Hits@1", "F1")]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for shape in shapes:
        cells = [shape, str(max(r.summary.get("by_shape", {}).get(shape, {}).get("questions", 0) for r in runs))]
        for run in runs:
            row = run.summary.get("by_shape", {}).get(shape)
            cells += [format_cell("hits@1", row and row["hits@1"]), format_cell("f1", row and row["f1"])]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def plot_report(runs: Sequence[EvalRun], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r.method for r in runs]
    metrics = [("hits@1", "Hits@1"), ("f1", "F1"), ("refusal_rate", "refusal rate")]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4), gridspec_kw={"width_ratios": [3, 2]})
    width = 0.8 / len(metrics)
    for i, (key, label) in enumerate(metrics):
        values = [r.summary.get(key) or 0.0 for r in runs]
        xs = [j + (i - (len(metrics) - 1) / 2) * width for j in range(len(runs))]
        bars = ax1.bar(xs, values, width, label=label)
        ax1.bar_label(bars, fmt="%.2f", fontsize=7)
    ax1.set_xticks(range(len(runs)), names)
    ax1.set_ylim(0, 1.05)
    ax1.set_title("scores")
    ax1.legend(fontsize=8)
    latencies = [[rec["seconds"] for rec in r.records if "seconds" in rec] or [0.0] for r in runs]
    ax2.boxplot(latencies, tick_labels=names, showfliers=True)
    ax2.set_ylabel("seconds per question")
    ax2.set_title("latency")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_report(out_dir: Path, runs: Sequence[EvalRun], meta: dict) -> dict[str, Path]:
    """Write the three report files into ``out_dir``; returns their paths by kind."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    meta = {"started": datetime.now(timezone.utc).isoformat(timespec="seconds"), **meta}
    paths = {"json": out_dir / "report.json", "md": out_dir / "report.md", "png": out_dir / "report.png"}
    doc = {**meta, "summary": summary_rows(runs),
           "runs": [{"method": r.method, "params": r.params, "summary": r.summary, "questions": r.records}
                    for r in runs]}
    paths["json"].write_text(json.dumps(doc, ensure_ascii=False, indent=2, default=str), encoding="utf-8")
    paths["md"].write_text(markdown_report(runs, meta), encoding="utf-8")
    plot_report(runs, paths["png"], f"{_title(meta['dataset'])} (n={meta['questions']})")
    return paths
