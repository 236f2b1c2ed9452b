"""The 30-second soak: `bench/soak.py --minutes 0.5` against a copy of the indexed demo store,
with an ingest of a second file and a /reload a quarter of the way in, and no /ask (the
real-model soak stays out of CI).

It asserts what a shared CI machine cannot blur: no unexpected error, /health OK at the
end, the reload done, and the per-minute records written. p99 and RSS growth are
benchmark figures: printed (run with -s), not asserted.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from test_qa_fixtures import demo_store  # noqa: F401  (session fixture)

pytest.importorskip("uvicorn")

SOAK = Path(__file__).resolve().parents[1] / "bench" / "soak.py"
KINDS = {"sparql-1hop", "sparql-2hop", "search", "link", "entity"}


def test_a_half_minute_soak_has_no_errors_and_writes_its_records(demo_store, tmp_path):  # noqa: F811
    out = tmp_path / "soak.json"
    run = subprocess.run([sys.executable, str(SOAK), "--store", str(demo_store), "--minutes", "0.5", "--clients", "8",
                          "--ingest-at", "0.25", "--second-lines", "2000", "--workdir", str(tmp_path / "work"),
                          "--out", str(out)],
                         capture_output=True, text=True, timeout=400)
    print(run.stdout, run.stderr[-3000:])
    assert run.returncode in (0, 1), run.stderr[-3000:]  # 1: a benchmark target failed (p99 on a busy machine)
    report = json.loads(out.read_text())
    assert report["targets"]["errors"]["verdict"] == "PASS", report["per_minute"][0]["first_errors"]
    assert report["health_at_end"] is True
    [minute] = report["per_minute"]
    assert set(minute["endpoints"]) == KINDS and all(e["requests"] > 0 for e in minute["endpoints"].values())
    assert minute["rss_mb"] > 0 and minute["load_average"] is not None
    assert report["ingest"]["ingest_exit"] == 0
    assert report["ingest"]["reload"]["snapshot"] == 1
    assert report["ingest"]["reload"]["triples"] > 390  # the demo sample's, and the second file's
    assert not (tmp_path / "work").exists()  # the copy of the store is removed
