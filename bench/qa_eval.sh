#!/usr/bin/env bash
# Issue 4's table: IO, QSM and pseudo-graph on MetaQA 1-hop and 2-hop dev (answerable
# subset) and PathQuestion PQ-2H, with the configured local model. Builds the two stores
# on first use (the MetaQA triple index takes about 5 min on 2 cores), then runs
# `kgstore eval`, which resumes where an interrupted run stopped.
#
#   bench/qa_eval.sh [WORKDIR] [LIMIT]      (defaults: ./bench-qa 100)
#
# Reports: WORKDIR/{metaqa1,metaqa2,pq2h}/report.{md,json,png}. About 45 s of model
# time per question for the three methods on 2 cores.
set -euo pipefail
WORK=${1:-./bench-qa}
LIMIT=${2:-100}
DATA=${KGSTORE_QA_DATA:-$(cd "$(dirname "$0")/../.." && pwd)/shared/data/qa}
export HF_HUB_OFFLINE=1
mkdir -p "$WORK"

store() {  # store NAME KB_FILE
  if [ ! -d "$WORK/$1" ]; then
    kgstore init "$WORK/$1"
    kgstore ingest "$WORK/$1" tsv "$2"
  fi
  kgstore index "$WORK/$1" --kinds entities,triples  # incremental: a no-op once complete
}
store metaqa "$DATA/metaqa/kb_partial.txt"
store pq "$DATA/pathquestion/2H-kb.txt"

run() {  # run STORE DATASET HOPS OUT
  kgstore eval "$WORK/$1" -d "$2" --hops "$3" -m pseudo-graph -m qsm -m io --limit "$LIMIT" --resume \
    --out "$WORK/$4" --data-dir "$DATA"
}
run metaqa metaqa 1 metaqa1
run metaqa metaqa 2 metaqa2
run pq pathquestion 2 pq2h
