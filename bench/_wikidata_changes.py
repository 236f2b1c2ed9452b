"""Seeded changes to a generated Wikidata JSON dump: a newer dump and the change feed
that turns the old one into it.

``dump_entities`` reads a dump of bench/_wikidata_gen.py into entity dicts;
``mutate`` changes a share of its items the ways Wikidata's do (labels, descriptions and
aliases edited; claims added, removed, re-valued and re-ranked; qualifiers added and
dropped), deletes some and merges some into others (redirects). It returns the newer
dump, as Wikidata would export it (a merged item is gone and every value that named it
names its target), and the feed a user's script would write from the recent changes:
each changed item's whole new document, ``{"id", "missing"}`` for a deleted one and
``{"id", "redirects"}`` for a merged one. Loading the old dump and applying the feed
must give the same store as loading the newer dump.
"""
from __future__ import annotations

import copy
import importlib.util
import io
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

_GEN = Path(__file__).with_name("_wikidata_gen.py")
if "_wikidata_gen" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("_wikidata_gen", _GEN)
    sys.modules["_wikidata_gen"] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules["_wikidata_gen"])
gen = sys.modules["_wikidata_gen"]


@dataclass
class Changes:
    """A newer dump and the feed that brings the old one there."""

    entities: list[dict]  # the newer dump
    feed: list[dict]  # changed documents, deletions and redirects, in feed order
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    redirected: dict[str, str] = field(default_factory=dict)


def dump_entities(n_entities: int, *, seed: int = 20240501, lean: bool = False) -> list[dict]:
    """The entities of a generated dump of ``n_entities`` (properties first)."""
    out = io.StringIO()
    gen.generate(n_entities, out, io.StringIO(), seed=seed, lean=lean)
    return [json.loads(line.rstrip().rstrip(",")) for line in out.getvalue().splitlines()
            if line.strip() not in ("[", "]", "")]


def write_lines(entities: list[dict], path) -> Path:
    """One JSON document per line (the shape of a dump and of a change feed)."""
    path = Path(path)
    with open(path, "w", encoding="utf-8") as f:
        for entity in entities:
            f.write(json.dumps(entity, ensure_ascii=False) + "\n")
    return path


def mutate(entities: list[dict], *, seed: int, share: float = 0.1, deleted: float = 0.02,
           redirected: float = 0.02) -> Changes:
    """Change ``share`` of the items, delete ``deleted`` of them and redirect
    ``redirected`` of them into others (all of them distinct items)."""
    rng = random.Random(seed)
    newer = {e["id"]: copy.deepcopy(e) for e in entities}
    items = [e["id"] for e in entities if e.get("type") == "item"]
    rng.shuffle(items)
    n_changed, n_deleted, n_redirected = (max(1, int(len(items) * f)) if f else 0
                                          for f in (share, deleted, redirected))
    changed = items[:n_changed]
    gone = items[n_changed:n_changed + n_deleted]
    merged = items[n_changed + n_deleted:n_changed + n_deleted + n_redirected]
    targets = [i for i in items if i not in set(gone) | set(merged)]
    redirects = {source: rng.choice(targets) for source in merged}
    donors = [e for e in entities if e.get("claims")]
    for eid in changed:
        for _ in range(rng.randint(1, 3)):
            _EDITS[rng.randrange(len(_EDITS))](newer[eid], rng, donors, items)
    for eid in gone + merged:
        del newer[eid]
    for entity in newer.values():  # what named a merged item names its target
        _retarget(entity, redirects)
    feed = [newer[eid] for eid in changed]
    feed += [{"id": eid, "missing": ""} for eid in gone]
    feed += [{"id": eid, "redirects": {"from": eid, "to": target}} for eid, target in redirects.items()]
    rng.shuffle(feed)
    # Changed documents are read after the redirects they name (a feed replays history).
    feed.sort(key=lambda doc: 0 if "redirects" in doc else 1)
    return Changes([e for e in (newer.get(x["id"]) for x in entities) if e is not None], feed, changed, gone,
                   redirects)


# -- the edits ---------------------------------------------------------------------------
def _label(entity, rng, donors, items) -> None:
    labels = entity.setdefault("labels", {})
    if "en" in labels and rng.random() < 0.25:
        del labels["en"]
    else:
        labels["en"] = {"language": "en", "value": f"{gen.WORDS[rng.randrange(30)].capitalize()} "
                                                   f"renamed {rng.randrange(10**6)}"}


def _description(entity, rng, donors, items) -> None:
    entity.setdefault("descriptions", {})["en"] = {"language": "en", "value": f"edited {rng.randrange(10**6)}"}


def _aliases(entity, rng, donors, items) -> None:
    aliases = entity.setdefault("aliases", {})
    en = aliases.get("en") or []
    if en and rng.random() < 0.5:
        en.pop(rng.randrange(len(en)))
    else:
        en.append({"language": "en", "value": f"alias {rng.randrange(10**6)}"})
    if en:
        aliases["en"] = en
    else:
        aliases.pop("en", None)


def _drop_claim(entity, rng, donors, items) -> None:
    claims = entity.get("claims") or {}
    if claims:
        del claims[rng.choice(sorted(claims))]


def _add_claim(entity, rng, donors, items) -> None:
    donor = rng.choice(donors)
    prop = rng.choice(sorted(donor["claims"]))
    statement = copy.deepcopy(rng.choice(donor["claims"][prop]))
    statement["id"] = f"{entity['id']}$ADDED-{rng.getrandbits(48):012X}"
    entity.setdefault("claims", {}).setdefault(prop, []).append(statement)


def _revalue(entity, rng, donors, items) -> None:
    statements = [st for sts in (entity.get("claims") or {}).values() for st in sts
                  if st["mainsnak"].get("datatype") == "wikibase-item" and st["mainsnak"].get("datavalue")]
    if statements:
        target = rng.choice(items)
        statement = rng.choice(statements)
        statement["mainsnak"]["datavalue"]["value"] = {"entity-type": "item", "numeric-id": int(target[1:]),
                                                       "id": target}


def _rerank(entity, rng, donors, items) -> None:
    statements = [st for sts in (entity.get("claims") or {}).values() for st in sts]
    if statements:
        rng.choice(statements)["rank"] = rng.choice(("preferred", "normal", "deprecated"))


def _qualifiers(entity, rng, donors, items) -> None:
    statements = [st for sts in (entity.get("claims") or {}).values() for st in sts]
    if not statements:
        return
    statement = rng.choice(statements)
    if statement.get("qualifiers"):
        statement.pop("qualifiers")
        statement.pop("qualifiers-order", None)
        return
    qualified = [st for e in donors for sts in e["claims"].values() for st in sts if st.get("qualifiers")]
    if qualified:
        statement["qualifiers"] = copy.deepcopy(rng.choice(qualified)["qualifiers"])


_EDITS = (_label, _description, _aliases, _drop_claim, _add_claim, _revalue, _rerank, _qualifiers)


def _retarget(node, redirects: dict[str, str]) -> None:
    """Every item value naming a merged item names its target instead."""
    if isinstance(node, dict):
        if node.get("entity-type") == "item" and node.get("id") in redirects:
            target = redirects[node["id"]]
            node["id"], node["numeric-id"] = target, int(target[1:])
        for value in node.values():
            _retarget(value, redirects)
    elif isinstance(node, list):
        for value in node:
            _retarget(value, redirects)
