"""Kill a real command with SIGKILL at a seeded random point, so a test can rerun it.

``run_killed`` starts the command in its own process group (so workers it forks die with
it), waits a seeded random time -- after an optional ``until`` condition, such as "the
first checkpoint is committed" -- and SIGKILLs the whole group. The caller then runs the
command again and compares with an uninterrupted run. Same seed, same kill point (as far
as timing on a shared machine allows), so a failure reproduces with its seed.
"""
from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence


@dataclass
class Kill:
    """What happened: ``killed`` is False when the command finished before its kill point
    (``returncode`` then says how), ``after_s`` is when the SIGKILL went, from the start."""

    seed: int
    killed: bool
    after_s: float
    returncode: int | None
    output: str = field(default="", repr=False)

    def __bool__(self) -> bool:
        return self.killed


def run_killed(cmd: Sequence[str], *, seed: int, min_s: float = 0.0, max_s: float = 1.0,
               until: Callable[[str], bool] | None = None, until_timeout_s: float = 120.0,
               env: dict | None = None, cwd=None) -> Kill:
    """Run ``cmd``; once ``until(output_so_far)`` is true (polled every 20 ms; no
    condition: at once), wait a random time in [min_s, max_s] drawn from ``seed``, then
    SIGKILL its process group and reap it. The output (stdout and stderr together) is what
    ``until`` sees and what the returned Kill keeps for failure messages."""
    delay = random.Random(seed).uniform(min_s, max_s)
    started = time.monotonic()
    proc = subprocess.Popen(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           start_new_session=True, env=env, cwd=cwd)
    chunks: list[str] = []
    try:
        out = _ReadInBackground(proc, chunks)
        if until is not None:
            deadline = time.monotonic() + until_timeout_s
            while not until("".join(chunks)):
                if proc.poll() is not None:
                    break
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{cmd[:3]}...: the kill condition did not come within {until_timeout_s} s")
                time.sleep(0.02)
        end = time.monotonic() + delay
        while proc.poll() is None and time.monotonic() < end:
            time.sleep(0.005)
        killed = proc.poll() is None
        after = time.monotonic() - started
        if killed:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        out.join()
        return Kill(seed, killed, after, None if killed else proc.returncode, "".join(chunks))
    finally:
        if proc.poll() is None:  # the condition raised: never leave it running
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


class _ReadInBackground:
    """Drain the child's pipe on a thread, so a chatty child never blocks on a full pipe."""

    def __init__(self, proc: subprocess.Popen, into: list[str]):
        import threading

        def drain():
            for line in proc.stdout:
                into.append(line)

        self.thread = threading.Thread(target=drain, daemon=True)
        self.thread.start()

    def join(self) -> None:
        self.thread.join(timeout=10)
