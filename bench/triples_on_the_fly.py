"""What a triple search costs on a store with no triple index (issue 30): the catalog read
of an entity's facts and their embedding, cold and from the caches.

    python bench/triples_on_the_fly.py /tmp/kgstore-index-scale/100000/store --entities 30

Samples ``--entities`` labelled entities evenly (plus the ``--hubs`` most popular ones),
then for each: reads its facts (``OnTheFlyTriples.facts``: the catalog queries the triple
index would have been built from, at most 256 an entity), embeds them with the store's
encoder (or ``--encoder``) and ranks them for one query. Prints p50/p90 per step, facts per
entity, the same search again (every text cached), and the load average.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))] if values else 0.0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store")
    parser.add_argument("--entities", type=int, default=30)
    parser.add_argument("--hubs", type=int, default=5)
    parser.add_argument("--encoder", default=None)
    args = parser.parse_args(argv)

    from indexer import Encoder, OnTheFlyTriples
    from kgstore import Store

    load = "%.2f %.2f %.2f" % os.getloadavg()
    with Store.open(args.store, read_only=True) as store:
        # the encoder alone: the store's vector kinds may have been built with another one
        encoder = Encoder(args.encoder) if args.encoder else Encoder.from_config(store.config.index,
                                                                                 base=Path(store.path))
        statements = store.stats()["statements"]
        iris = [iri for batch in store.entity_names(batch_rows=100_000) for iri in batch.column("iri").to_pylist()]
        sample = random.Random(3).sample(iris, min(args.entities, len(iris)))
        popularity = store.popularity(iris[:200_000])
        hubs = sorted(popularity, key=popularity.get, reverse=True)[:args.hubs]
        engine = OnTheFlyTriples(store, encoder)
        encoder.embed(["warm up"])
        query = encoder.embed(["what is it known for"])
        rows = []
        for iri in sample + hubs:
            t0 = time.perf_counter()
            facts = engine.facts([iri])[iri]
            t1 = time.perf_counter()
            engine.vectors([e.text for e in facts])
            t2 = time.perf_counter()
            engine.search(query, [[iri]], 10)
            t3 = time.perf_counter()
            rows.append((iri in hubs, len(facts), t1 - t0, t2 - t1, t3 - t2))
    for name, picked in (("sampled", [r for r in rows if not r[0]]), ("hubs", [r for r in rows if r[0]])):
        if not picked:
            continue
        facts, read, embed, again = ([r[i] for r in picked] for i in (1, 2, 3, 4))
        print(f"{name} entities ({len(picked)}): facts p50 {pct(facts, .5):.0f}, max {max(facts)}; "
              f"catalog read p50 {1000 * pct(read, .5):.0f} ms, p90 {1000 * pct(read, .9):.0f} ms; "
              f"embedding p50 {1000 * pct(embed, .5):.0f} ms, p90 {1000 * pct(embed, .9):.0f} ms; "
              f"the search again (cached) p50 {1000 * pct(again, .5):.1f} ms")
    print(f"store: {statements:,} statements; encoder {encoder.name}; load {load} at the start, "
          "%.2f %.2f %.2f at the end" % os.getloadavg())
    return 0


if __name__ == "__main__":
    sys.exit(main())
