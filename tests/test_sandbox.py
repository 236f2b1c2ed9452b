"""The Cypher sandbox the pseudo-graph QA method runs LLM-written CREATE statements in."""
import pytest

from kgstore.errors import CypherSyntaxError, UnsafeQueryError
from qa.sandbox import PseudoTriple, clean_cypher, run_pseudo_graph

# The research's example: "Who covers more countries, the Andes or the Himalayas?"
ANDES = ('CREATE (andes:Mountain_Range {name:"Andes"}), (himalayas:Mountain_Range {name:"Himalayas"}), '
         '(p:Property {name:"number of countries covered"}), '
         '(andes)-[:COVERS]->(:Country {name:"Argentina"}), (andes)-[:COVERS]->(:Country {name:"Chile"}), '
         '(himalayas)-[:COVERS]->(:Country {name:"Nepal"}), '
         '(andes)-[:HAS_PROPERTY]->(p), (himalayas)-[:HAS_PROPERTY]->(p)')
ANDES_TRIPLES = [
    ("Andes", "COVERS", "Argentina"),
    ("Andes", "COVERS", "Chile"),
    ("Himalayas", "COVERS", "Nepal"),
    ("Andes", "HAS_PROPERTY", "number of countries covered"),
    ("Himalayas", "HAS_PROPERTY", "number of countries covered"),
]


def test_research_example_decodes_to_exact_triples():
    pg = run_pseudo_graph(ANDES)
    assert pg.triples == ANDES_TRIPLES
    assert all(isinstance(t, PseudoTriple) for t in pg.triples)
    assert pg.subjects == ["Andes", "Himalayas"]
    assert len(pg.nodes) == 6  # the HAS_PROPERTY node is shared, not duplicated
    assert {n.name: n.labels for n in pg.nodes}["number of countries covered"] == ("Property",)
    assert {n.name: n.variable for n in pg.nodes}["Andes"] == "andes"


def test_detach_delete_is_refused_with_a_reason():
    with pytest.raises(UnsafeQueryError) as err:
        run_pseudo_graph("MATCH (n) DETACH DELETE n")
    assert str(err.value) == ("MATCH and DETACH DELETE are not allowed in a pseudo-graph; only CREATE (or MERGE) "
                              "statements that add nodes and relationships are allowed (line 1, column 1)")
    assert (err.value.position, err.value.line, err.value.column) == (0, 1, 1)


@pytest.mark.parametrize("text, clause, line, column", [
    ('CREATE (a:X {name: "a"})\nSET a.born = 1990', "SET", 2, 1),
    ('CREATE (a:X {name: "a"})\nWITH a\nMATCH (b) CREATE (a)-[:R]->(b)', "WITH and MATCH", 2, 1),
    ("UNWIND range(1, 1000000) AS i CREATE (:X {i: i})", "UNWIND", 1, 1),
    ('LOAD CSV FROM "file:///etc/passwd" AS line CREATE (:X {v: line[0]})', "LOAD CSV", 1, 1),
    ("CALL db.labels()", "CALL", 1, 1),
    ('CREATE (a:X {name: "a"})\nREMOVE a:X', "REMOVE", 2, 1),
    ('MERGE (a:X {name: "a"}) ON CREATE SET a.x = 1', "MERGE ... ON CREATE/ON MATCH SET", 1, 1),
])
def test_everything_but_creation_is_refused(text, clause, line, column):
    with pytest.raises(UnsafeQueryError, match=rf"^{clause.replace('.', '[.]')} (is|are) not allowed") as err:
        run_pseudo_graph(text)
    assert (err.value.line, err.value.column) == (line, column)


def test_labels_and_keys_spelled_like_clauses_are_not_refused():
    pg = run_pseudo_graph('CREATE (m:Match {name: "Final", set: "first"}), (s:Set {name: "S"}), (m)-[:MATCH]->(s)')
    assert pg.triples == [("Final", "MATCH", "S"), ("Final", "set", "first")]


def test_parse_error_carries_its_position_in_the_text_as_given():
    text = ('```cypher\nCREATE (a:Person {name: "Yao Ming"});\n'
            'CREATE (b:Team {name: "Rockets"), (a)-[:PLAYED_FOR]->(b)\n```')
    with pytest.raises(CypherSyntaxError) as err:
        run_pseudo_graph(text)
    e = err.value
    assert (e.line, e.column) == (3, 32)
    assert text.splitlines()[e.line - 1][e.column - 1] == ")"
    assert text[e.offset] == ")"
    assert e.line_text == 'CREATE (b:Team {name: "Rockets"), (a)-[:PLAYED_FOR]->(b)'
    assert str(e).startswith("Cypher syntax error at line 3, column 32: mismatched input ')'")


def test_unterminated_string_and_empty_text_are_syntax_errors():
    with pytest.raises(CypherSyntaxError, match="line 1, column 20: Unterminated string literal"):
        run_pseudo_graph('CREATE (a:X {name: "unterminated})')
    with pytest.raises(CypherSyntaxError, match="no Cypher statements found"):
        run_pseudo_graph("I cannot answer that.")


def test_what_small_models_write_is_tolerated():
    text = '''Here is the knowledge graph for the question:

```cypher
// people and teams
CREATE (yao:Person {name: "Yao Ming", height_m: 2.29, born: date("1980-09-12")});
CREATE (rockets:Team {name: "Houston Rockets"});
/* the relationship, reusing variables
   from the statements above */
CREATE (yao)-[:PLAYED_FOR {since: 2002}]->(rockets);
MERGE (yao)-[:PLAYED_FOR]->(rockets)
RETURN yao, rockets
```

This graph says Yao Ming played for the Houston Rockets.'''
    pg = run_pseudo_graph(text)
    assert pg.triples == [
        ("Yao Ming", "PLAYED_FOR", "Houston Rockets"),
        ("Yao Ming", "height_m", "2.29"),
        ("Yao Ming", "born", "1980-09-12"),
    ]
    assert pg.edges[0].properties == (("since", 2002),)
    assert pg.statements == 4
    assert len(pg.code) == len(text) and pg.code.count("\n") == text.count("\n")


def test_prose_around_unfenced_statements_is_ignored():
    text = ('Sure! Here are the statements.\n'
            'CREATE (a:Person {name: "Yao Ming"})\n'
            'CREATE (b:Team {name: "Houston Rockets"}),\n'
            '  (a)-[:PLAYED_FOR]->(b)\n'
            'These statements create two nodes and one relationship.')
    assert run_pseudo_graph(text).triples == [("Yao Ming", "PLAYED_FOR", "Houston Rockets")]
    cleaned = clean_cypher(text).splitlines()
    assert cleaned[0].strip() == "" and cleaned[-1].strip() == ""


def test_node_names_fall_back_to_a_string_property_then_the_variable():
    pg = run_pseudo_graph('CREATE (f:Film {title: "Alien", year: 1979}), (d:Director), (f)-[:DIRECTED_BY]->(d)')
    assert pg.triples == [("Alien", "DIRECTED_BY", "d"), ("Alien", "year", "1979")]


def test_values_must_be_literals():
    with pytest.raises(UnsafeQueryError, match="the value of property 'name' is a parameter"):
        run_pseudo_graph("CREATE (a {name: $x})")
    with pytest.raises(UnsafeQueryError, match=r"property 'n' is an expression \(FunctionCall\)"):
        run_pseudo_graph("CREATE (a {n: range(1, 100000000)})")


def test_size_is_capped():
    many = "\n".join(f'CREATE (n{i}:X {{name: "n{i}"}})' for i in range(40))
    with pytest.raises(UnsafeQueryError, match="40 CREATE/MERGE statements exceed the sandbox's cap of 30"):
        run_pseudo_graph(many, max_statements=30)
    with pytest.raises(UnsafeQueryError, match="writes 40 node and 0 relationship patterns; the sandbox's caps are 10"):
        run_pseudo_graph(many, max_nodes=10)
    with pytest.raises(UnsafeQueryError, match="characters long"):
        run_pseudo_graph("CREATE (a)" + " " * 30_000)


def test_each_run_is_isolated():
    run_pseudo_graph('CREATE (a:X {name: "first"})')
    pg = run_pseudo_graph('MERGE (a:X {name: "second"})')
    assert [n.name for n in pg.nodes] == ["second"]


def test_time_is_capped():
    with pytest.raises(UnsafeQueryError, match="took longer than 0 s"):
        run_pseudo_graph(ANDES, timeout_s=0)
