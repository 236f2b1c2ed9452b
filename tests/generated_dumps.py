"""bench/_wikidata_changes.py (generated Wikidata dumps and seeded change feeds) for the
tests of `kgstore update`, imported once by path: bench/ is not a package."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_PATH = Path(__file__).resolve().parents[1] / "bench" / "_wikidata_changes.py"
if "_wikidata_changes" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("_wikidata_changes", _PATH)
    sys.modules["_wikidata_changes"] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules["_wikidata_changes"])
changes = sys.modules["_wikidata_changes"]
