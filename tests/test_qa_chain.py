"""Pure functions behind the pseudo-graph method's hop-by-hop lookup and its verification
grammar (qa.methods.pseudo_graph._chain, qa.steps._graph_text)."""
from __future__ import annotations

from qa.methods.pseudo_graph._chain import Lookup, lookup_plan, next_hop_entities
from qa.steps._graph_text import align_to_ground, answer_terms_grammar, fact_pairs, pair_lines_grammar, parse_triple_lines
from qa.steps._result import Evidence

CURIE, IRENE, EVE = "ex:pierre_curie", "ex:irene", "ex:eve"


def test_lookup_starts_from_the_entities_the_question_names_and_follows_the_chain():
    triples = [("The Godfather", "LANGUAGE", "English"), ("Joel Zwick", "DIRECTED_BY", "The Godfather")]
    plan = lookup_plan(triples, "what are the languages spoken in the films directed by Joel Zwick")
    assert plan == [[Lookup(triples[1], known=0, resolves=True)], [Lookup(triples[0], known=0, resolves=True)]]


def test_an_edge_written_backwards_is_looked_up_from_its_known_object():
    triples = [("Movie", "STARRED_ACTORS", "Josh Lawson"), ("Movie", "DIRECTED_BY", "Director")]
    plan = lookup_plan(triples, "which person directed the movies starred by Josh Lawson")
    assert plan == [[Lookup(triples[0], known=2, resolves=True)], [Lookup(triples[1], known=0, resolves=True)]]


def test_a_description_that_contains_a_named_entity_is_not_itself_known():
    triples = [("Pierre Curie", "CHILD", "Pierre Curie's son"), ("Pierre Curie's son", "NATIONALITY", "French")]
    plan = lookup_plan(triples, "what is the nationality of pierre_curie 's son ?")
    assert [[(x.triple[0], x.known, x.resolves) for x in level] for level in plan] == [
        [("Pierre Curie", 0, True)], [("Pierre Curie's son", 0, True)]]


def test_without_named_entities_the_roots_start_and_both_named_ends_need_no_resolving():
    assert lookup_plan([("A", "R", "B"), ("B", "S", "C")], "unrelated words") == [
        [Lookup(("A", "R", "B"), 0, True)], [Lookup(("B", "S", "C"), 0, True)]]
    assert lookup_plan([("Andes", "COUNTRY", "Peru")], "is the Andes in Peru") == [
        [Lookup(("Andes", "COUNTRY", "Peru"), 0, False)]]
    # a cycle with nothing named: the first triple starts it
    assert lookup_plan([("A", "R", "B"), ("B", "R", "A")], "?")[0] == [Lookup(("A", "R", "B"), 0, True)]


def hit(s, s_label, p, o, o_label, score, literal=False):
    return Evidence(s=s, p=p, o=o, s_label=s_label, p_label=p.split(":")[-1], o_label=o_label, literal=literal,
                    score=score)


def test_next_hop_entities_follow_the_best_relation_of_the_entity_named():
    hits = [hit(CURIE, "pierre curie", "ex:children", IRENE, "irene joliot-curie", 0.79),
            hit("ex:marie", "marie curie", "ex:children", EVE, "eve curie", 0.75),
            hit(CURIE, "pierre curie", "ex:children", EVE, "eve curie", 0.70),
            hit(CURIE, "pierre curie", "ex:spouse", "ex:marie", "marie curie", 0.72),
            hit(CURIE, "pierre curie", "ex:born", "1859", None, 0.60, literal=True)]
    assert next_hop_entities(hits, "Pierre Curie") == [(IRENE, "irene joliot-curie"), (EVE, "eve curie")]
    assert next_hop_entities(hits, "Pierre Curie", limit=1) == [(IRENE, "irene joliot-curie")]
    # read backwards: the film is the far end of "film | starred actors | actor"
    film = hit("ex:film", "Away We Go", "ex:starred", "ex:jk", "John Krasinski", 0.6)
    assert next_hop_entities([film], "John Krasinski") == [("ex:film", "Away We Go")]
    assert next_hop_entities([film], "Nobody Matching") == []
    assert next_hop_entities([], "x") == []


def test_verification_lines_may_name_a_ground_fact_by_subject_and_relation():
    ground = [("Rhine", "country", "Germany"), ("Rhine", "country", "France"), ("Rhine", "length", "1230 km")]
    assert fact_pairs(ground) == ["Rhine | country", "Rhine | length"]
    lines = parse_triple_lines("Rhine | country\nRhine | source\nnot a fact\n", pairs=True)
    assert lines == [("Rhine", "country", ""), ("Rhine", "source", "")]
    fixed, notes = align_to_ground(lines, ground)
    assert fixed == [("Rhine", "country", "Germany"), ("Rhine", "country", "France")]
    assert notes == {"completed": [], "dropped": ["Rhine | source | "]}
    assert parse_triple_lines("Rhine | country\n") == []  # without pairs=True, only full triples


def test_the_verification_grammar_allows_only_the_ground_heads():
    grammar = pair_lines_grammar(['Say "hi" | a\\b', "Rhine | country"], max_lines=3)
    assert grammar == ('root ::= line{1,3}\n'
                       'line ::= ("Say \\"hi\\" | a\\\\b" | "Rhine | country") "\\n"\n')


def test_the_answer_grammar_allows_only_the_facts_terms_in_marks():
    grammar = answer_terms_grammar(["Rhine", 'Say "hi"', "a\\b", "Rhine ", "unknown", "{odd}", "two\nlines", " "])
    assert grammar == ('root ::= text mark (text mark)* text\n'
                       'text ::= [^{}\\n]*\n'
                       'mark ::= "{" term "}"\n'
                       'term ::= "unknown" | "Rhine" | "Say \\"hi\\"" | "a\\\\b"\n')
    assert answer_terms_grammar([]).endswith('term ::= "unknown"\n')


def test_a_single_valued_fact_named_brings_its_siblings():
    ground = [("Tracker", "starred actors", "Temuera Morrison"), ("River Queen", "starred actors", "Temuera Morrison"),
              ("River Queen", "directed by", "Vincent Ward"), ("Rhine", "country", "Germany"),
              ("Rhine", "country", "France"), ("Danube", "country", "Germany")]
    fixed, _ = align_to_ground([("Tracker", "starred actors", "")], ground)
    assert fixed == [("Tracker", "starred actors", "Temuera Morrison"),
                     ("River Queen", "starred actors", "Temuera Morrison")]
    # several values: no siblings (the Danube also flows through Germany, but was not named)
    fixed, _ = align_to_ground([("Rhine", "country", "")], ground)
    assert fixed == [("Rhine", "country", "Germany"), ("Rhine", "country", "France")]


def test_pruning_can_score_an_entity_by_its_best_triples():
    from qa.methods.pseudo_graph._pruning import prune

    facts = [hit("ex:film", "Are You Here", f"ex:r{i}", f"ex:o{i}", f"o{i}", score)
             for i, score in enumerate([0.8, 0.7, 0.6, 0.3, 0.2])]
    kept, dropped = prune([("Are You Here", facts)], k=1, popularity={}, threshold=0.55)
    assert kept == [] and dropped[0][1] == "mean similarity 0.520 < 0.55"
    kept, _ = prune([("Are You Here", facts)], k=1, popularity={}, threshold=0.55, score_top=3)
    assert [(g.iri, round(g.score, 3), len(g.triples)) for g in kept] == [("ex:film", 0.7, 5)]


def test_named_nodes_that_are_not_store_entities_are_guesses_when_another_one_is():
    # "darling" is in the question too, but only Andronikos III is a store entity
    triples = [("Darling", "FRIEND", "Andronikos III Palaiologos")]
    question = "the gender of darling of andronikos_iii_palaiologos ?"
    assert lookup_plan(triples, question) == [[Lookup(triples[0], known=0, resolves=False)]]
    assert lookup_plan(triples, question, in_store={"andronikos iii palaiologos"}) == [
        [Lookup(triples[0], known=2, resolves=True)]]
    # with no named node in the store, the question's own wording still decides
    assert lookup_plan(triples, question, in_store={"somebody else"}) == [
        [Lookup(triples[0], known=0, resolves=False)]]


def test_a_node_linked_to_itself_looks_up_its_far_end():
    # the model named the answer node after the question's entity
    triples = [("Anne of Great Britain", "MARRIED", "Anne of Great Britain")]
    assert lookup_plan(triples, "the nationality of couple of anne_of_great_britain ?") == [
        [Lookup(triples[0], known=0, resolves=True)]]


def test_a_list_answer_keeps_the_items_the_evidence_holds():
    from qa.steps._grounding import ground_answers

    facts = [hit("ex:sw", "siegfried wagner", "ex:profession", "ex:composer", "composer", 0.7),
             hit("ex:sw", "siegfried wagner", "ex:profession", "ex:conducting", "conducting", 0.7)]
    grounded, unmatched = ground_answers(["composer, conductor"], facts)
    assert [(t.iri, t.label) for t in grounded] == [("ex:composer", "composer")]
    assert unmatched == ["conductor"]
    grounded, unmatched = ground_answers(["composer and conducting", "pianist"], facts)
    assert [t.iri for t in grounded] == ["ex:composer", "ex:conducting"] and unmatched == ["pianist"]


def test_hop_facts_are_those_of_reached_entities_the_fixed_graph_leads_to():
    from qa.methods.pseudo_graph._method import hop_facts

    joe = [hit("ex:joe", "joe keaton", "ex:profession", "ex:actor", "actor", 0.5),
           hit("ex:joe", "joe keaton", "ex:gender", "ex:male", "male", 0.45)]
    other = [hit("ex:myra", "myra keaton", "ex:profession", "ex:actor", "actor", 0.5)]
    extended = [("ex:joe", "joe keaton", joe), ("ex:myra", "myra keaton", other)]
    in_ground = {(e.s, e.p, e.o) for e in joe + other} - {("ex:joe", "ex:gender", "ex:male")}
    fixed = [("buster keaton", "parents", "joe keaton")]
    assert hop_facts(fixed, extended, in_ground) == [("joe keaton", "profession", "actor")]
    assert hop_facts([("buster keaton", "gender", "male")], extended, in_ground) == []
