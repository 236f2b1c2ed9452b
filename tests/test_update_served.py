"""A served store updated without a restart (issue 50): `kgstore serve` answers a steady
query load while `kgstore update --server` applies an update of 1,000 entities. No request
fails, every answer is the old or the new version of what it asks, and afterwards the
server answers from the new data. Real processes: the server, the update client, and
the writer the server starts."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections import Counter

import httpx
import pytest

import kgstore
from kgstore import Store
from kgstore.graph import sync_graph
from generated_dumps import changes


PYTHON = sys.executable
CLI = "import sys; from kgstore.cli import main; sys.argv[0] = 'kgstore'; main()"
TOKEN = "served-update-test"
UPDATED = 1000
LOAD_THREADS = 4


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _label(entity: dict) -> str | None:
    return (entity.get("labels") or {}).get("en", {}).get("value")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("served-update")
    old = changes.dump_entities(1300, seed=11)
    items = sum(1 for e in old if e.get("type") == "item")
    newer = changes.mutate(old, seed=12, share=UPDATED / items, deleted=0.0, redirected=0.0)
    assert len(newer.changed) == UPDATED
    dump = changes.write_lines(old, root / "old.jsonl")
    feed = changes.write_lines(newer.feed, root / "feed.jsonl")
    with Store.init(root / "store") as store:
        kgstore.ingest(store, "wikidata-json", dump)
        sync_graph(store)
        from indexer import build_index

        build_index(store, kinds=["entities"])
    port = _free_port()
    server = subprocess.Popen([PYTHON, "-c", CLI, "serve", str(root / "store"), "--port", str(port),
                               "--token", TOKEN], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.2)
    old_by_id = {e["id"]: e for e in old}
    new_by_id = {e["id"]: e for e in newer.entities}
    relabelled = [i for i in newer.changed if _label(old_by_id[i]) != _label(new_by_id[i])][:20]
    try:
        yield url, feed, relabelled, old_by_id, new_by_id
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_update_through_the_server_under_load(served):
    url, feed, relabelled, old_by_id, new_by_id = served
    assert relabelled
    headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/sparql-results+json"}
    stop = threading.Event()
    tally: Counter = Counter()
    failures: list[str] = []
    mixed: list[str] = []
    lock = threading.Lock()

    def load(worker: int) -> None:
        with httpx.Client(headers=headers, timeout=300) as client:
            n = 0
            while not stop.is_set():
                eid = relabelled[(n + worker) % len(relabelled)]
                allowed = {_label(old_by_id[eid]), _label(new_by_id[eid])}
                kind = ("sparql", "entity", "search", "stats")[n % 4]
                n += 1
                try:
                    if kind == "sparql":
                        r = client.get(f"{url}/sparql", params={
                            "query": f"SELECT ?l WHERE {{ wd:{eid} rdfs:label ?l FILTER(lang(?l) = 'en') }}"})
                        seen = {b["l"]["value"] for b in r.json()["results"]["bindings"]} if r.status_code == 200 \
                            else None
                        seen = seen or {None}
                    elif kind == "entity":
                        r = client.get(f"{url}/entity/{eid}")
                        seen = {r.json().get("label")} if r.status_code == 200 else None
                    elif kind == "search":
                        r = client.get(f"{url}/search", params={"kind": "entities", "q": "castle", "k": 3})
                        seen = None
                    else:
                        r = client.get(f"{url}/stats")
                        seen = None
                except httpx.HTTPError as exc:
                    with lock:
                        tally["requests"] += 1
                        failures.append(f"{kind}: {type(exc).__name__}: {exc}")
                    continue
                with lock:
                    tally["requests"] += 1
                    tally[kind] += 1
                    if r.status_code != 200:
                        failures.append(f"{kind} {eid}: HTTP {r.status_code} {r.text[:200]}")
                    elif seen is not None and not seen <= allowed:
                        mixed.append(f"{kind} {eid}: {seen} not in {allowed}")

    threads = [threading.Thread(target=load, args=(i,), daemon=True) for i in range(LOAD_THREADS)]
    for t in threads:
        t.start()
    time.sleep(3)  # the load is steady before the update starts
    before = tally["requests"]
    started = time.monotonic()
    done = subprocess.run([PYTHON, "-c", CLI, "update", "--server", url, "--token", TOKEN, str(feed),
                           "--format", "json"], capture_output=True, text=True, env={**os.environ})
    update_s = time.monotonic() - started
    time.sleep(2)
    stop.set()
    for t in threads:
        t.join(timeout=300)
    assert done.returncode == 0, done.stderr + done.stdout
    summary = json.loads(done.stdout)
    print(f"served update: {tally['requests']} requests ({before} before the update started; {dict(tally)}), "
          f"{len(failures)} failed, update took {update_s:.1f} s; summary {summary}")
    assert summary["status"] == "done" and summary["documents"] == UPDATED
    assert failures == []
    assert mixed == []
    assert tally["requests"] > before  # requests ran during the update too
    # After the update, with no restart, the server answers from the new data.
    with httpx.Client(headers=headers, timeout=60) as client:
        for eid in relabelled:
            r = client.get(f"{url}/entity/{eid}")
            assert r.status_code == 200 and r.json()["label"] == _label(new_by_id[eid])
            r = client.get(f"{url}/sparql", params={
                "query": f"SELECT ?l WHERE {{ wd:{eid} rdfs:label ?l FILTER(lang(?l) = 'en') }}"})
            labels = {b["l"]["value"] for b in r.json()["results"]["bindings"]}
            assert labels == ({_label(new_by_id[eid])} - {None})


def test_sparql_update_and_tokenless_update_are_refused(served):
    url, feed, *_ = served
    r = httpx.post(f"{url}/update", content="INSERT DATA { <http://e/a> <http://e/b> <http://e/c> }",
                   headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/sparql-update"})
    assert r.status_code == 403
    r = httpx.post(f"{url}/update", content=feed.read_bytes())
    assert r.status_code == 401
