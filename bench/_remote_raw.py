"""The reference for ``sync ÷ raw export`` in bench/remote.py: the engine's whole graph
streamed to /dev/null by ``curl`` (a plain client that costs next to nothing), one request
per candidate, the fastest kept.

Candidates: ``CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }`` as N-Triples, and the streamed
``SELECT ?s ?p ?o WHERE { ?s ?p ?o }`` that `kgstore sync` sends to an endpoint without a
result cap, in every results format the engine writes faithfully. Each is timed on the
wall clock and in the engine's CPU seconds (/proc), since on a shared machine the wall
clock carries the neighbours' work too.
"""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

CONSTRUCT = "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"
SELECT = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"
N_TRIPLES = "application/n-triples"
# (label, query, media type); Virtuoso's TSV is left out: it writes bare values, not terms
CANDIDATES = {
    "oxigraph": [("CONSTRUCT as N-Triples", CONSTRUCT, N_TRIPLES),
                 ("SELECT as TSV", SELECT, "text/tab-separated-values"),
                 ("SELECT as XML", SELECT, "application/sparql-results+xml")],
    "virtuoso": [("CONSTRUCT as N-Triples", CONSTRUCT, N_TRIPLES),
                 ("SELECT as XML", SELECT, "application/sparql-results+xml")],
}


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def raw_export(engine: str, url: str, graph: str, pid: int, *, rounds: int = 1) -> dict:
    """Every candidate of ``engine``, ``rounds`` times each; the fastest request (by wall
    clock) is the reference: ``{"best": {...}, "tried": [...]}``."""
    tried = []
    for label, query, media in CANDIDATES[engine]:
        for _ in range(rounds):
            tried.append(_curl(label, url, graph, pid, query, media))
    return {"best": min(tried, key=lambda r: r["seconds"]), "tried": tried}


def _curl(label: str, url: str, graph: str, pid: int, query: str, media: str) -> dict:
    cmd = ["curl", "--silent", "--show-error", "--fail", "--noproxy", "*", "--output", "/dev/null",
           "--write-out", "%{size_download}", "--header", f"Accept: {media}",
           "--data-urlencode", f"query={query}", "--data-urlencode", f"default-graph-uri={graph}", url]
    engine_cpu, started = cpu_seconds(pid), time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True)
    seconds = time.monotonic() - started
    return {"request": label, "seconds": round(seconds, 3), "bytes": int(done.stdout or 0),
            "engine_cpu_s": round(cpu_seconds(pid) - engine_cpu, 3)}
