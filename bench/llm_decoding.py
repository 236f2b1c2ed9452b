"""Constrained decoding benchmark: kgstore's llama.cpp backend against llama-cpp-python's
own `create_chat_completion` doing the same work, in the same run.

    python bench/llm_decoding.py [--repeat 3]

Two prompts, each with a grammar, at temperature 0:

1. an agent step shaped like the query agent's: a system turn with the action list, a
   worked trajectory, then a grammar whose thought opens with 30-odd tokens the
   environment wrote (the chain so far, the plan, its next item), a free rest of the
   thought and one of four actions;
2. a JSON answer under a JSON schema (no forced opening: only the grammar-last step).

Both sides load the packaged model with the same settings; each prompt is evaluated
whole every time (no prefix reuse), the two sides alternating. The raw side is the stock
sampler chain, which tests every vocabulary token against the grammar at every step and
generates the forced opening token by token. kgstore's side asks the grammar about the
model's best token first and reads a forced opening of 8 tokens or more in as prompt
(its last token left to the model). Prints, per prompt, the median seconds of each side,
the ratio raw / kgstore (above 1: kgstore is faster), the tokens each generated, and
whether the texts are the same (they must be).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kgstore.config import LLMConfig  # noqa: E402
from qa.llm import llm_from_config  # noqa: E402

SYSTEM = """You answer a question over a knowledge graph by building a query, one action per step. Each step is two lines:
Thought: one short sentence about what to do next.
Action: one action.

Actions:
- get_relations(x): the relations of the entity id x or the variable ?x, both ways.
- add_fact(s, r, o): add the fact "s r o" to the query.
- set_answer(?v): ?v holds what the question asks for; the query then runs."""

USER = """Question: where was the father of the spouse of sylvia_brett born?
Entities: sylvia_brett (sylvia brett)
Thought: First, the relations of sylvia_brett.
Action: get_relations(sylvia_brett)
Observation: Relations of sylvia_brett (sylvia brett):
  sylvia_brett spouse ?   e.g. charles vyner brooke
  sylvia_brett nationality ?   e.g. united kingdom
  sylvia_brett profession ?   e.g. writer
Thought: Done: nothing yet. Plan: sylvia_brett -> spouse -> father -> place of birth. Next: spouse.
Action: add_fact(sylvia_brett, spouse, ?x1)
Observation: Added sylvia_brett spouse ?x1.
?x1 = 1 value: charles vyner brooke
Relations of ?x1:
  ?x1 parents ?   e.g. charles anthoni johnson brooke
  ? spouse ?x1   e.g. sylvia brett
Query so far: sylvia_brett spouse ?x1"""

STEP_GRAMMAR = (
    'root ::= "Thought: Done: sylvia_brett -> spouse. Plan: sylvia_brett -> spouse -> father -> place of birth. '
    'Next: father (parents)." [^\\n]{0,120} "\\nAction: " action\n'
    'action ::= "add_fact(?x1, parents, ?x2)" | "add_fact(?x2, spouse, ?x1)" | "get_relations(?x1)" '
    '| "set_answer(?x1)"\n')

JSON_SCHEMA = {"type": "object", "properties": {"capital": {"type": "string"}, "country": {"type": "string"}},
               "required": ["capital", "country"], "additionalProperties": False}

CASES = [
    ("agent step", [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}],
     {"grammar": STEP_GRAMMAR}, 80),
    ("JSON answer", [{"role": "user", "content": "What is the capital of France? Reply in JSON."}],
     {"schema": JSON_SCHEMA}, 32),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per side and prompt (default 3)")
    args = parser.parse_args()

    ours = llm_from_config(LLMConfig())
    model = ours.model
    model.set_cache(None)  # evaluate every prompt whole, as the raw side does
    import llama_cpp

    raw = llama_cpp.Llama(model_path=str(ours.model_path), n_ctx=ours.n_ctx, n_threads=ours.n_threads,
                          n_threads_batch=ours.n_threads, seed=ours.seed, verbose=False)
    print(f"model {ours.model_path.name}, {ours.n_threads} threads, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)

    def run_ours(messages, constraint, max_tokens):
        model.reset()
        started = time.perf_counter()
        c = ours.complete(messages, max_tokens=max_tokens, temperature=0.0, **constraint)
        return time.perf_counter() - started, c.text, c.completion_tokens

    def run_raw(messages, constraint, max_tokens):
        raw.reset()
        if "schema" in constraint:
            grammar = llama_cpp.LlamaGrammar.from_json_schema(json.dumps(constraint["schema"], sort_keys=True),
                                                              verbose=False)
        else:
            grammar = llama_cpp.LlamaGrammar.from_string(constraint["grammar"], verbose=False)
        started = time.perf_counter()
        r = raw.create_chat_completion(messages=messages, max_tokens=max_tokens, temperature=0.0, seed=ours.seed,
                                       grammar=grammar)
        return (time.perf_counter() - started, r["choices"][0]["message"]["content"],
                r["usage"]["completion_tokens"])

    run_ours(*CASES[1][1:])  # warm both up
    run_raw(*CASES[1][1:])
    results = []
    for name, messages, constraint, max_tokens in CASES:
        ours_s, raw_s = [], []
        for _ in range(args.repeat):
            s, ours_text, ours_tokens = run_ours(messages, constraint, max_tokens)
            ours_s.append(s)
            s, raw_text, raw_tokens = run_raw(messages, constraint, max_tokens)
            raw_s.append(s)
        same = ours_text == raw_text
        ratio = statistics.median(raw_s) / statistics.median(ours_s)
        results.append(same)
        print(f"{name}: kgstore {statistics.median(ours_s):.2f} s ({ours_tokens} tokens generated), "
              f"raw llama-cpp-python {statistics.median(raw_s):.2f} s ({raw_tokens} tokens), "
              f"ratio raw/kgstore {ratio:.2f}, same text: {'yes' if same else 'NO'}", flush=True)
        if not same:
            print(f"  kgstore: {ours_text!r}\n  raw:     {raw_text!r}")
    print(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
