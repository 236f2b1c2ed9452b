"""A vector file saved beside its target replaces it only when it is whole."""
from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path


def replace_if_whole(tmp: Path, path: Path, expected: int) -> None:
    """Move ``tmp`` over ``path`` if it holds ``expected`` bytes. The vector libraries do not
    all check their writes: on a full disk they can leave a short file and say nothing, and
    that must never replace the good one. A short file is removed and OSError raised
    (ENOSPC when the disk is what ran out)."""
    written = tmp.stat().st_size
    if written != expected:
        tmp.unlink(missing_ok=True)
        full = shutil.disk_usage(tmp.parent).free < expected - written + (1 << 20)
        raise OSError(errno.ENOSPC if full else errno.EIO,
                      f"{'No space left on device' if full else 'short write'}: wrote {written} of "
                      f"{expected} bytes of {path}")
    os.replace(tmp, path)
