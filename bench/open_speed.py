"""Seconds an open answer takes in a warm process, with the load it ran under.

    python bench/open_speed.py STORE [QUESTION ...]

loads the store's model once, answers one open question to warm it, then times each
question (by default the four open demo questions of issue 51) and prints the p50, with
the load average (``os.getloadavg``) before and after.
"""
from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DEMO = ["Tell me about Douglas Adams", "What do you know about the Andes?", "Describe Nepal.",
        "Why is Mount Everest famous?"]


def main() -> None:
    from kgstore import Store
    from qa import QAContext, llm_from_config, make_method

    if len(sys.argv) < 2:
        sys.exit(__doc__.split("\n\n")[1])
    questions = sys.argv[2:] or DEMO
    with Store.open(sys.argv[1], read_only=True) as store:
        method = make_method("cascade", QAContext(store, llm_from_config(store.config.llm)))
        method.answer("Tell me about Kathmandu")  # warm: the model loaded, the prompts' heads cached
        before = os.getloadavg()
        seconds = []
        for q in questions:
            answer = method.answer(q)
            seconds.append(answer.seconds)
            print(f"{answer.seconds:6.1f} s  {answer.tokens.prompt:4d} + {answer.tokens.completion:3d} tokens  {q}")
        after = os.getloadavg()
    print(f"p50 {statistics.median(seconds):.1f} s over {len(seconds)} open answers; "
          f"load average {before[0]:.2f} before, {after[0]:.2f} after, on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
