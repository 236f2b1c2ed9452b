import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
SAMPLE = REPO / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def sample_dir() -> Path:
    return SAMPLE


BOLT_PASSWORD_ENV = "KGSTORE_TEST_BOLT_PASSWORD"


@pytest.fixture(scope="session")
def bolt_server(tmp_path_factory):
    """A live Bolt server for the Neo4j backend, one per test session.

    With NEO4J_URI set: that server (a real Neo4j; NEO4J_USER, default neo4j; NEO4J_PASSWORD;
    NEO4J_DATABASE, default neo4j). Otherwise ArcadeDB's Bolt server from the
    ``arcadedb-embedded`` package (the ``test`` extra), started in a child process on a free
    loopback port with a generated password, and stopped by its pid at the end.
    The tests write to its database: never point NEO4J_URI at a database you care about.
    """
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from bolt_server import BoltServer

    uri = os.environ.get("NEO4J_URI")
    with pytest.MonkeyPatch.context() as mp:
        if uri:
            server = BoltServer(uri, os.environ.get("NEO4J_USER", "neo4j"), os.environ.get("NEO4J_PASSWORD", ""),
                                os.environ.get("NEO4J_DATABASE", "neo4j"))
        else:
            try:
                import arcadedb_embedded  # noqa: F401
            except ImportError:
                pytest.skip("no Bolt server: install the test extra (arcadedb-embedded) or set NEO4J_URI")
            server = BoltServer.start(tmp_path_factory.mktemp("bolt"))
        mp.setenv(BOLT_PASSWORD_ENV, server.password)
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture
def use_bolt(bolt_server):
    """Point a store at the Bolt server: ``use_bolt(store_dir)`` writes its [graph] section
    (backend neo4j), so the API and the CLI, in this process or another, mirror there."""
    from kgstore.config import GraphConfig, StoreConfig

    def configure(store_dir) -> None:
        config = StoreConfig.load(Path(store_dir))
        config.graph = GraphConfig(backend="neo4j", neo4j_uri=bolt_server.uri, neo4j_user=bolt_server.user,
                                   neo4j_password_env=BOLT_PASSWORD_ENV, neo4j_database=bolt_server.database)
        config.save(Path(store_dir))

    return configure
