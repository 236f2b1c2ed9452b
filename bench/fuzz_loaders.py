"""Coverage-guided fuzzing (atheris, libFuzzer) of each loader's line mapper.

Each loader turns one line (one record) into triples and catalog rows with a pure
function; this runs that function on inputs libFuzzer mutates towards new coverage:

* ``tsv``: ``loaders.triples._parse_lines`` (first input byte: tab or '|' separator,
  underscores read as spaces or not);
* ``wikidata-json``: ``WikidataJsonLoader._line`` (first byte: truthy mode, through
  msgspec's typed decoder, or full statements, through orjson);
* ``wikidata-rdf``: a chunk of N-Triples lines as the loader parses it (Oxigraph, then
  line by line on an error) and maps it (``quads_to_triples``, ``subset``,
  ``catalog_records``);
* ``freebase``: ``loaders.freebase._load_line`` and the batch's records.

A crash is any exception out of the mapper (a malformed record must become a reject, never
an exception), or mapped triples that the store's own N-Triples writer
(``kgstore._columns``) turns into text Oxigraph refuses: that batch's commit would fail.

Seeds are the first lines of the real fixtures in ``../shared/data/formats/`` (read, not
copied) plus a few lines of each format. Loaders run one after another (the machine is
shared); each runs ``--seconds`` in a libFuzzer child process, and this prints its
executions, coverage (edges), features, corpus growth and crashes. A crash's input is
written to ``--crash-dir`` (``crash-<loader>-<sha1>``) and the exit status is 1.

    python bench/fuzz_loaders.py [--loader NAME|all] [--seconds 60] [--crash-dir bench/fuzz-crashes]
    python bench/fuzz_loaders.py --loader tsv --reproduce bench/fuzz-crashes/crash-tsv-...

Needs the ``fuzz`` extra (``pip install -e '.[fuzz]'``).
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FORMATS_DIR = REPO.parent / "shared" / "data" / "formats"
LOADERS = ("tsv", "wikidata-json", "wikidata-rdf", "freebase")
SEED_FILES = {
    "tsv": [REPO.parent / "shared" / "data" / "qa" / "metaqa" / "kb_partial.txt"],
    "wikidata-json": [FORMATS_DIR / "wikidata_json" / "wdtk_mock-dump-for-testing.json",
                      FORMATS_DIR / "wikidata_json" / "wdtk_mock-dump-with-bugs.json"],
    "wikidata-rdf": sorted((FORMATS_DIR / "wikidata_rdf" / "derived_nt").glob("*.nt")),
    "freebase": [FORMATS_DIR / "freebase_rdf" / "fb-rdf-10k-head.nt"],
}
SEED_LINES = {
    "tsv": [b"Something Borrowed|written_by|Emily Giffin", b"ludwig_ii_of_bavaria\tparents\tmaximilian_ii\n"],
    "wikidata-json": [b'{"id":"Q1","type":"item","labels":{"en":{"language":"en","value":"A"}}}',
                      b'{"id":"Q2","type":"item","claims":{"P625":[{"mainsnak":{"snaktype":"value","property":"P625",'
                      b'"datatype":"globe-coordinate","datavalue":{"type":"globecoordinate","value":{"latitude":1,'
                      b'"longitude":2}}},"type":"statement","rank":"normal"}]}}'],
    "wikidata-rdf": [b'<http://www.wikidata.org/entity/Q1> <http://www.w3.org/2000/01/rdf-schema#label> "A"@en .\n'],
    "freebase": [b'</m.01>\t</type.object.name>\t"A"@en\t.\n'],
}
SEEDS_PER_FILE = 40
_STAT = re.compile(r"^#(\d+)\s+(?:INITED|NEW|REDUCE|pulse|DONE|RELOAD)\s+cov: (\d+) ft: (\d+) corp: (\d+)")


# -- the mappers (in the libFuzzer child) ----------------------------------------------------------
def make_target(loader: str):
    """``TestOneInput`` for ``loader``, with the loader's modules instrumented."""
    import atheris

    with atheris.instrument_imports(include=["loaders", "kgstore.terms", "kgstore._columns", "kgstore.records"]):
        import pyoxigraph as ox

        from kgstore._columns import ntriples_bytes, triple_columns
        from kgstore.records import Batch, Checkpoint, LoadOptions
        from loaders import freebase, triples, wikidata_json, wikidata_rdf

    def committable(batch_triples) -> None:
        """The batch's triples as the store writes them must parse: else its commit fails."""
        if batch_triples:
            data = ntriples_bytes(triple_columns(batch_triples))
            list(ox.parse(input=data, format=ox.RdfFormat.N_TRIPLES))

    if loader == "tsv":
        options = LoadOptions()

        def one(data: bytes) -> None:
            if not data:
                return
            mode, line = data[0], data[1:]
            minter = triples._Minter(options, underscores_are_spaces=bool(mode & 2))
            batch = Batch(checkpoint=Checkpoint(0, 0))
            triples._parse_lines([(1, line)], "|" if mode & 1 else "\t", minter, options, batch)
            committable(batch.triples)
        return one

    if loader == "wikidata-json":
        modes = (LoadOptions(), LoadOptions(statements="full"), LoadOptions(languages=("en", "de", "mul")))
        reader = wikidata_json.WikidataJsonLoader()

        def one(data: bytes) -> None:
            if not data:
                return
            batch = Batch(checkpoint=Checkpoint(0, 0))
            reader._line(1, data[1:], modes[data[0] % len(modes)], batch)
            committable(wikidata_json._sound_text(batch.triples))
        return one

    if loader == "wikidata-rdf":
        options = LoadOptions()
        rdf = wikidata_rdf.WikidataRdfLoader

        def one(data: bytes) -> None:
            lines = [(i + 1, line) for i, line in enumerate(data.splitlines(keepends=True))]
            batch = Batch(checkpoint=Checkpoint(0, 0))
            try:
                quads = list(ox.parse(input=data, format=ox.RdfFormat.N_TRIPLES))
            except SyntaxError:
                quads = rdf._line_by_line(lines, ox.RdfFormat.N_TRIPLES, "N-Triples", batch.rejected)
            batch.triples = wikidata_rdf.quads_to_triples(quads, "urn:skolem:", batch.counts)
            rdf._fill_catalog(batch, options)
            committable(batch.triples)
        return one

    if loader == "freebase":
        seed_file = tempfile.NamedTemporaryFile(suffix=".nt", delete=False)
        seed_file.write(b"# the run state needs a file to fingerprint\n")
        seed_file.close()
        state = freebase._RunState(seed_file.name, LoadOptions())

        def one(data: bytes) -> None:
            batch = Batch(checkpoint=Checkpoint(0, 0))
            builder = freebase._BatchBuilder(state, batch)
            freebase._load_line(1, data, state, builder)
            builder.finish()
            committable(batch.triples)
        return one
    raise SystemExit(f"unknown loader {loader!r}; one of {', '.join(LOADERS)}")


def _worker(loader: str, libfuzzer_args: list[str]) -> None:
    import atheris

    target = make_target(loader)
    atheris.Setup([sys.argv[0], *libfuzzer_args], target)
    atheris.Fuzz()


def _reproduce(loader: str, path: str) -> int:
    target = make_target(loader)
    target(Path(path).read_bytes())
    print(f"{path}: no crash")
    return 0


# -- the driver -----------------------------------------------------------------------------------
def _seed_corpus(loader: str, directory: Path) -> int:
    """First lines of the fixtures, one file each (the mode byte first where the mapper reads one)."""
    lines: list[bytes] = list(SEED_LINES[loader])
    for path in SEED_FILES[loader]:
        if not path.is_file():
            continue
        with open(path, "rb") as f:
            for _, line in zip(range(SEEDS_PER_FILE), f):
                lines.append(line)
    prefix = b"" if loader in ("wikidata-rdf", "freebase") else b"\x00"
    for i, line in enumerate(lines):
        (directory / f"seed-{i:04d}").write_bytes(prefix + line)
    return len(lines)


def fuzz(loader: str, seconds: int, crash_dir: Path) -> dict:
    crash_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"fuzz-{loader}-") as tmp:
        corpus = Path(tmp) / "corpus"
        corpus.mkdir()
        seeds = _seed_corpus(loader, corpus)
        args = [f"-max_total_time={seconds}", "-max_len=16384", "-rss_limit_mb=4096", "-timeout=20",
                f"-artifact_prefix={crash_dir}/crash-{loader}-", "-print_final_stats=1", str(corpus)]
        cmd = [sys.executable, __file__, "--worker", loader, "--", *args]
        done = subprocess.run(cmd, capture_output=True, text=True, errors="replace", cwd=REPO)
        corpus_after = len(list(corpus.iterdir()))
    log = done.stderr
    stats = [m.groups() for m in map(_STAT.match, log.splitlines()) if m]
    first, last = (stats[0], stats[-1]) if stats else (("0",) * 4, ("0",) * 4)
    runs = re.search(r"stat::number_of_executed_units:\s*(\d+)", log) or re.search(r"Done (\d+) runs", log)
    crashes = sorted(set(re.findall(r"Test unit written to (\S+)", log)))
    return {
        "loader": loader, "seconds": seconds, "seeds": seeds,
        "executions": int(runs.group(1)) if runs else int(last[0]),
        "coverage_start": int(first[1]), "coverage": int(last[1]), "features": int(last[2]),
        "corpus": corpus_after, "new_units": max(0, corpus_after - seeds),
        "crashes": crashes, "exit": done.returncode,
        "tail": "\n".join(log.splitlines()[-40:]) if done.returncode else "",
    }


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        _worker(argv[1], argv[3:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loader", default="all", choices=("all", *LOADERS))
    ap.add_argument("--seconds", type=int, default=60, help="fuzzing time per loader")
    ap.add_argument("--crash-dir", type=Path, default=REPO / "bench" / "fuzz-crashes")
    ap.add_argument("--reproduce", metavar="FILE", help="run one input through the mapper and raise its error")
    args = ap.parse_args(argv)
    if args.reproduce:
        if args.loader == "all":
            ap.error("--reproduce needs --loader")
        return _reproduce(args.loader, args.reproduce)
    try:
        import atheris  # noqa: F401
    except ImportError:
        print("atheris is not installed: pip install -e '.[fuzz]'", file=sys.stderr)
        return 2
    failed = False
    for loader in LOADERS if args.loader == "all" else (args.loader,):
        r = fuzz(loader, args.seconds, args.crash_dir)
        took = "until the first crash" if r["crashes"] else f"in {r['seconds']} s"
        print(f"{loader}: {r['executions']:,} executions {took}, coverage {r['coverage_start']} -> "
              f"{r['coverage']} edges ({r['features']} features), corpus {r['seeds']} seeds -> {r['corpus']} "
              f"(+{r['new_units']}), crashes: {len(r['crashes'])}", flush=True)
        for path in r["crashes"]:
            print(f"  crashing input: {path}")
        if r["crashes"] or r["exit"] not in (0,):
            failed = True
            if r["tail"]:
                print(r["tail"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
