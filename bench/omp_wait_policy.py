"""Generated tokens/s of the packaged model under each OpenMP wait policy, on a quiet
machine and beside a busy one (one process spinning on a core), in the same run.

    python bench/omp_wait_policy.py [--tokens 120] [--repeats 3]

Each policy runs in a fresh process (libgomp reads OMP_WAIT_POLICY once, at load):
``unset`` is libgomp's own default (spin 300,000 times, then sleep), ``PASSIVE`` sleeps at
once, ``ACTIVE`` never sleeps, ``GOMP_SPINCOUNT=N`` spins N times first (kgstore's default:
1,000). Prints the median tokens/s of each, its ratio against ``unset``, and the load
average.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
POLICIES = ("unset", "PASSIVE", "ACTIVE", "GOMP_SPINCOUNT=300", "GOMP_SPINCOUNT=1000", "GOMP_SPINCOUNT=3000")
DEFAULT = "GOMP_SPINCOUNT=1000"  # what kgstore sets when the user set neither

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import llama_cpp
from kgstore.config import LLMConfig
from qa.llm import llm_from_config
llm = llama_cpp.Llama(model_path=str(llm_from_config(LLMConfig()).model_path), n_ctx=2048,
                      n_threads=2, n_threads_batch=2, verbose=False)
prompt = "Write a long paragraph about the Andes and the countries they cross."
llm(prompt, max_tokens=8, temperature=0)  # warm
rates = []
for _ in range(int(sys.argv[3])):
    llm.reset()
    started = time.perf_counter()
    out = llm(prompt, max_tokens=int(sys.argv[2]), temperature=0)
    rates.append(out["usage"]["completion_tokens"] / (time.perf_counter() - started))
print(json.dumps(rates))
"""


def _spin(stop) -> None:
    while not stop.is_set():
        pass


def rate(policy: str, tokens: int, repeats: int) -> float:
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    env.pop("GOMP_SPINCOUNT", None)
    if policy.startswith("GOMP_SPINCOUNT="):
        env["GOMP_SPINCOUNT"] = policy.split("=", 1)[1]
    elif policy != "unset":
        env["OMP_WAIT_POLICY"] = policy
    out = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(tokens), str(repeats)],
                         env=env, capture_output=True, text=True, check=True)
    return statistics.median(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=120)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for busy in (False, True):
        stop = multiprocessing.Event()
        hog = multiprocessing.Process(target=_spin, args=(stop,)) if busy else None
        if hog:
            hog.start()
            time.sleep(1)
        load = os.getloadavg()[0]
        rates = {p: rate(p, args.tokens, args.repeats) for p in POLICIES}
        if hog:
            stop.set()
            hog.join()
        label = "busy (one core spinning)" if busy else "quiet"
        print(f"{label}: load average {load:.2f} -> {os.getloadavg()[0]:.2f}")
        for p in POLICIES:
            mark = "  (kgstore's default)" if p == DEFAULT else ""
            print(f"  {p:22s} {rates[p]:5.1f} tokens/s   x{rates[p] / rates['unset']:.2f} of unset{mark}")


if __name__ == "__main__":
    main()
