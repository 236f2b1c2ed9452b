"""A full disk: ingest and index on a small tmpfs that fills up midway must stop with a clear
error naming the disk (exit 14, no traceback), leave a store that opens read-only with what
was committed, and, once space is freed, resume to the uninterrupted result.

The tests mount the tmpfs themselves (as root) and unmount it afterwards; where mounting is
not allowed they are skipped with the reason."""
from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import kgstore
from kgstore import Store
from kgstore.records import LoadOptions
from test_kills import index_stores, same_results, search_results  # noqa: F401  (session fixture)
from test_resume_kill import _metaqa_head, _snapshot

CLI = "import sys; from kgstore.cli import main; sys.argv[0] = 'kgstore'; main()"


class SmallDisk:
    """A tmpfs of a given size at ``path``; ``grow`` remounts it bigger ("space is freed")."""

    def __init__(self, path):
        self.path = path
        self.mounted = False

    def mount(self, size: str) -> "SmallDisk":
        self.path.mkdir(parents=True, exist_ok=True)
        self._mount("-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(self.path))
        self.mounted = True
        return self

    def grow(self, size: str) -> None:
        self._mount("-o", f"remount,size={size}", str(self.path))

    def free_bytes(self) -> int:
        return shutil.disk_usage(self.path).free

    def unmount(self) -> None:
        if self.mounted:
            subprocess.run(["umount", str(self.path)], check=False, capture_output=True)
            if os.path.ismount(self.path):  # something still holds it open: detach it anyway
                subprocess.run(["umount", "-l", str(self.path)], check=False, capture_output=True)
            self.mounted = False

    @staticmethod
    def _mount(*args: str) -> None:
        done = subprocess.run(["mount", *args], capture_output=True, text=True)
        if done.returncode != 0:
            raise OSError(done.stderr.strip() or f"mount exited with {done.returncode}")


@pytest.fixture
def small_disk(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    if shutil.which("mount") is None:
        pytest.skip("no mount command on this machine")
    disk = SmallDisk(tmp_path / "disk")
    try:
        disk.mount("1M")
    except OSError as exc:
        pytest.skip(f"this machine cannot mount a tmpfs: {exc}")
    try:
        yield disk
    finally:
        disk.unmount()


def kgstore_cli(*args, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CLI, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def assert_disk_full_error(done: subprocess.CompletedProcess, store, disk, doing: str) -> None:
    said = done.stdout + done.stderr
    assert done.returncode == 14, said
    assert "Traceback" not in said
    assert f"no space left on device while {doing} {store}" in said
    assert f"free space on the disk mounted at {disk.path} and rerun the same command to resume" in said


# -- ingest -------------------------------------------------------------------------------------
# 5 MB fills up in Oxigraph's files, about a tenth into the file.
@pytest.mark.parametrize("size", ["5M"])
def test_ingest_on_a_full_disk_stops_clearly_and_resumes_once_space_is_freed(small_disk, tmp_path, shared_data,
                                                                              size):
    kb = _metaqa_head(tmp_path, shared_data)
    with Store.init(tmp_path / "clean") as store:
        kgstore.ingest(store, "tsv", kb, options=LoadOptions(batch_size=1000))
    clean = _snapshot(tmp_path / "clean")

    small_disk.unmount()
    small_disk.mount(size)
    store_dir = small_disk.path / "store"
    Store.init(store_dir).close()
    command = ("ingest", store_dir, "tsv", kb, "--batch-size", 1000)
    assert_disk_full_error(kgstore_cli(*command), store_dir, small_disk, "loading into")

    # Still full: the store opens read-only, with whole batches in both stores and nothing
    # the uninterrupted run does not hold.
    triples, facts, entities, runs = _snapshot(store_dir)
    assert runs == (1, "running")  # resumable
    assert 0 < len(facts) < len(clean[1]) and set(facts) <= set(clean[1])
    assert set(triples) <= set(clean[0])
    assert {e[:2] for e in entities} <= {e[:2] for e in clean[2]}  # popularity is counted at the end

    small_disk.grow("64M")
    resumed = kgstore_cli(*command)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert _snapshot(store_dir) == (*clean[:3], (1, "done"))


# -- index --------------------------------------------------------------------------------------
# Room for the catalog's new rows, not for all the vectors too. In this process (CliRunner),
# so the model loads once for the session; the ingest test above checks a real process.
@pytest.mark.parametrize("spare_kb", [1400])
def test_index_on_a_full_disk_stops_clearly_and_resumes_once_space_is_freed(small_disk, index_stores, spare_kb):
    from click.testing import CliRunner

    from indexer import Index
    from kgstore.cli import main

    base, clean_summary, clean_results = index_stores
    used_kb = sum(f.stat().st_size for f in base.rglob("*") if f.is_file()) // 1024
    small_disk.unmount()
    small_disk.mount(f"{used_kb + spare_kb}k")
    store_dir = small_disk.path / "store"
    shutil.copytree(base, store_dir)
    command = ["index", str(store_dir), "--kinds", "entities", "--batch-size", "4", "--format", "json"]
    full = CliRunner().invoke(main, command)
    assert full.exit_code == 14 and isinstance(full.exception, SystemExit), full.output
    assert f"no space left on device while indexing {store_dir}" in full.output
    assert f"free space on the disk mounted at {small_disk.path} and rerun the same command" in full.output

    with Store.open(store_dir, read_only=True) as store:  # opens, full as it is
        manifest = Index.open(store).info().get("entities")
    assert manifest is None or not manifest["complete"]

    small_disk.grow("64M")
    resumed = CliRunner().invoke(main, command)
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.output)["kinds"][0]["items"] == clean_summary.items
    with Store.open(store_dir, read_only=True) as store:
        index = Index.open(store)
        assert index.info()["entities"]["items"] == clean_summary.items
        assert same_results(search_results(index), clean_results)


def test_a_vector_file_that_does_not_fit_keeps_the_saved_one(small_disk):
    """hnswlib writes without checking: on a full disk it left a short file that replaced
    the good one, and the next open failed or lost vectors."""
    from indexer._hnsw import VectorFile

    small_disk.unmount()
    small_disk.mount("600k")
    path = small_disk.path / "entities.hnsw"
    vectors = np.random.default_rng(0).random((600, 384), dtype=np.float32)
    vf = VectorFile.create(path, 384, M=16, ef_construction=50, ef=50)
    vf.add(vectors[:100], np.arange(100))
    vf.save()
    saved = path.read_bytes()
    vf.add(vectors[100:], np.arange(100, 600))
    with pytest.raises(OSError) as caught:
        vf.save()
    assert caught.value.errno == errno.ENOSPC
    assert path.read_bytes() == saved and not path.with_name(path.name + ".tmp").exists()
    assert VectorFile.load(path, 384, ef=50).count == 100
