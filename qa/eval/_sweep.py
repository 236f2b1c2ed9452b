"""A method option swept over a range of values: Hits@1, refusal on not-in-store
questions and wrongful refusal on answerable ones, per value, as a table and a PNG.

Only what happens after the model has written depends on a threshold, so the sweep runs
the model once per prompt (``qa.llm.CachingLLM``) and every further value is nearly free.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from kgstore.errors import DatasetError


@dataclass(frozen=True)
class Sweep:
    key: str
    values: tuple[float, ...]


def parse_sweep(text: str) -> Sweep:
    """``threshold=0.5:0.95:0.05`` → Sweep("threshold", (0.5, 0.55, ..., 0.95)); a
    comma list (``gamma1=0.5,0.6,0.7``) works too."""
    key, sep, spec = text.partition("=")
    if not sep or not key.strip():
        raise DatasetError(f"--sweep takes KEY=START:STOP:STEP or KEY=V1,V2,..., not {text!r}")
    try:
        if ":" in spec:
            start, stop, step = (float(x) for x in spec.split(":"))
            if step <= 0 or stop < start:
                raise ValueError
            count = int(round((stop - start) / step)) + 1
            values = tuple(round(start + i * step, 6) for i in range(count))
        else:
            values = tuple(float(x) for x in spec.split(","))
    except ValueError:
        raise DatasetError(f"--sweep {text!r}: START:STOP:STEP must be numbers with STEP > 0 and STOP >= START")
    return Sweep(key.strip().replace("-", "_"), values)


def sweep_row(value: float, normal: dict, absent: dict) -> dict:
    """One value's figures from the two runs' summaries."""
    return {"value": value, "hits@1": normal.get("hits@1"), "wrongful_refusal": normal.get("refusal_rate"),
            "refusal_not_in_store": absent.get("refusal_rate"), "questions": normal.get("questions"),
            "not_in_store_questions": absent.get("questions")}


def write_sweep(out_dir: Path, method: str, sweep: Sweep, rows: list[dict], meta: dict) -> dict[str, Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"json": out_dir / f"sweep-{method}-{sweep.key}.json", "png": out_dir / f"sweep-{method}-{sweep.key}.png"}
    paths["json"].write_text(json.dumps({**meta, "method": method, "key": sweep.key, "rows": rows}, indent=2,
                                        default=str), encoding="utf-8")
    plot_sweep(rows, paths["png"], f"{method}: {sweep.key} ({meta.get('title', '')})", sweep.key)
    return paths


def plot_sweep(rows: list[dict], path: Path, title: str, key: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [r["value"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    for field, label, style in (("hits@1", "Hits@1 (answerable)", "o-"),
                                ("refusal_not_in_store", "refusal (not in store)", "s-"),
                                ("wrongful_refusal", "wrongful refusal (answerable)", "^-")):
        ax.plot(xs, [r.get(field) or 0.0 for r in rows], style, label=label)
    ax.set_xlabel(key)
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


__all__ = ["Sweep", "parse_sweep", "sweep_row", "write_sweep", "plot_sweep"]
