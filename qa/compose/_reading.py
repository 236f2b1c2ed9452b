"""The question, read once: the entities and values it mentions and its cue words.

Every later step of composing (candidates, verbalizing, choosing, checking) takes this
record and never goes back to the question string. A step that needs something new from
the words adds a field here.

Linking is generous on purpose. People type names in lower case, shortened ("lincoln",
"seahawks"), without accents ("eva peron"), as adjectives ("jamaican") or by an alias the
store holds ("uk"). A weak link is not a reason to refuse: it becomes one more candidate
topic, and only a query graph that the store can execute, and that the model picks, turns
it into an answer.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Sequence

from ..shapes._word_forms import singulars
from ..steps._query_graph import ValueConstraint, answer_form, read_value_constraints
from ..steps._retrieval import bracketed_spans

# Words kept as features of the question, never as rules: the encoder and the model read
# the question itself; these only break ties between candidates of the same score.
CUE_WORDS = frozenset("""
how many much number count first last earliest latest newest oldest most least highest lowest
biggest largest smallest longest shortest before after since until not both and or same
""".split())
# cue words that ask for the first or last of several (a feature: an ordering candidate is
# enumerated only for a question that has one)
ORDER_CUES = frozenset("first last earliest latest newest oldest most least highest lowest biggest largest "
                       "smallest longest shortest youngest".split())
# words that deny ("not", "without", "aren't"): a negated constraint is enumerated only for
# a question that has one
NEGATION_CUES = frozenset("not no never without except lack lacks lacking other than".split())
# words that compare two named things ("the same year", "how many years apart", "A vs B",
# "older"): comparisons are enumerated only for a question that has one
# the words that compare how many values two things hold ("who directed more films")
COUNT_COMPARATIVES = frozenset("more less fewer outnumber".split())
COMPARISON_CUES = frozenset("""same apart difference gap between vs versus or than older newer earlier later younger
""".split()) | COUNT_COMPARATIVES
# which end each ordering word asks for: the first by value (ascending) or the last
ASCENDING_CUES = frozenset("first earliest oldest least lowest smallest shortest".split())
# which of two compared values a comparative asks for: the lower (earlier, older) or the
# higher; "younger" is the later date of birth
LOWER_COMPARATIVES = frozenset("earlier older sooner before lower smaller shorter".split())
HIGHER_COMPARATIVES = frozenset("later newer younger after higher bigger larger longer taller recent".split())
# the words a yes/no question opens with
YES_NO_OPENINGS = frozenset("is are was were do does did has have had can could will would".split())
# words that join two roles of one answer ("both directed and acted in", "did they also
# act"): a candidate tying the answer back to the topic by a second relation is enumerated
# only for a question that has one
CONJUNCTION_CUES = frozenset("both also and".split())
# words that ask for others sharing something with the one named ("starred together with
# X", "X also directed", "the same director as X", "co-wrote with X"): a chain there and
# back along one relation is what such a question asks for
SHARING_CUES = frozenset("together also same share shares shared alongside co".split())
_ALL_CUES = (CUE_WORDS | ORDER_CUES | NEGATION_CUES | COMPARISON_CUES | LOWER_COMPARATIVES | HIGHER_COMPARATIVES
             | CONJUNCTION_CUES | SHARING_CUES)
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
# an article written in lower case before a name ("the Italian-language films")
_LOWER_ARTICLE = re.compile(r"(?:the|a|an)\s+")
# a year written after a name ("fedex cup 2012")
_YEAR_AFTER = re.compile(r"\s+(?:1[5-9]\d\d|20\d\d)$")
# the words that set two names against each other ("A vs B", "A or B")
_JOINED = re.compile(r"\s+(?:vs\.?|versus|or)\s+", re.I)


@dataclass(frozen=True)
class LinkedEntity:
    """One entity a mention may mean: its IRI and label, the linker's ``score`` and how
    it matched (``exact``, ``label``, ``alias``, ``vector``)."""

    iri: str
    label: str
    score: float
    match: str


@dataclass(frozen=True)
class Mention:
    """Words of the question that name something the store holds: the text as written,
    its ``span`` in the question's ``text``, and the entities it may mean, best first."""

    text: str
    span: tuple[int, int]
    entities: tuple[LinkedEntity, ...]
    bracketed: bool = False

    @property
    def best(self) -> LinkedEntity:
        return self.entities[0]


@dataclass(frozen=True)
class QuestionReading:
    """The question as every composing step sees it.

    ``question`` as asked; ``text`` with brackets removed (what the encoder and the model
    read); ``mentions`` best first; ``values`` the constants it writes (years, numbers,
    with their comparison); ``cues`` the cue words it uses (features only); ``form`` what
    its wh-words ask for (:func:`qa.steps._query_graph.answer_form`)."""

    question: str
    text: str
    mentions: tuple[Mention, ...]
    values: tuple[ValueConstraint, ...] = ()
    cues: frozenset[str] = field(default_factory=frozenset)
    # what the question's wh-words ask for: "value" (when, in which year, how tall),
    # "number" (how many) or "entities" (which, who, what)
    form: str = "entities"
    # where in ``text`` the first word that denies stands (None: none does)
    denial_at: int | None = None
    # the best entities of mentions a refusal set aside (:meth:`about`): no topic, and never
    # an answer, since the question names them ("nasri" of "who did nasri play for before
    # arsenal", once the store was searched for "Arsenal" alone)
    set_aside: frozenset[str] = field(default_factory=frozenset)

    def topics(self, per_mention: int = 2, limit: int = 4) -> list[tuple[Mention, LinkedEntity]]:
        """Candidate topic entities: the best ``per_mention`` entities of each mention,
        bracketed mentions first, then by the linker's score; at most ``limit``."""
        pairs = [(m, e) for m in self.mentions for e in m.entities[:per_mention]]
        pairs.sort(key=lambda pair: (not pair[0].bracketed, -pair[1].score))
        seen: set[str] = set()
        out = []
        for mention, entity in pairs:
            if entity.iri not in seen:
                seen.add(entity.iri)
                out.append((mention, entity))
        return out[:limit]

    def others(self, topic: LinkedEntity) -> list[LinkedEntity]:
        """What a constraint may tie the answer to: for every mention that does not overlap
        the one ``topic`` came from, its best entity and every other that bears its name
        ("family" is a tag and a genre: the store's ties say which one the answers hold)."""
        own = [m.span for m in self.mentions if any(e.iri == topic.iri for e in m.entities)]
        out = []
        for m in self.mentions:
            if any(m.span[0] < b and a < m.span[1] for a, b in own):
                continue
            named = [e for e in m.entities[1:] if e.match != "vector"]
            for entity in [m.best, *named]:
                if entity.iri != topic.iri and entity.iri not in {e.iri for e in out}:
                    out.append(entity)
        return out

    def without_absent(self, names: Sequence[str], index=None) -> "QuestionReading":
        """The reading without the mentions that are part of a name the store was found to
        lack ("park" of "zorblax park"), unless the entity bears that whole name: with
        ``index``, the whole name but the words of the store's relations, which say what is
        asked of it ("Islamic religion" is borne by *Islam*). A name
        written as a possessive ("Angelina Jolie's brother", a draft's guess at the answer)
        is the name before its "'s": what follows says what of it is asked. A year the
        draft wrote after a name ("[ENT: FedEx Cup 2012]" of "who won fedex cup 2012") is
        the question's constant, not a word of the name."""
        names = self._absent_names(names)
        absent = [set(_folded_words(n)) for n in names if n.strip()]
        if not absent:
            return self
        kept = []
        for m in self.mentions:
            words = set(_folded_words(m.text))
            inside = [n for n, a in zip(names, absent) if words and words <= a]
            entities = tuple(e for e in m.entities if all(written_like(n, e.label, index) for n in inside))
            if entities:
                kept.append(replace(m, entities=entities))
        return replace(self, mentions=tuple(kept))

    def near_absent(self, names: Sequence[str], index=None) -> tuple[tuple[str, Mention], ...]:
        """The mentions inside a name the store was found to lack whose entities write all
        of that name's words but one (a name of two words or more), each with those
        entities only, beside the name: what :meth:`without_absent` drops that may still be
        the one meant ("vince scully" of *Vin Scully*, "sir james dyson", "riviera casino").
        A name spliced from two ("Temuera Venable") writes all but one as well: only the
        model, asked of each, tells them apart (:func:`qa.compose.confirmed_names`)."""
        # each name of two name words or more, with how many of them an entity near it writes
        wanted = {n: len(_name_words(n, index)) - 1 for n in self._absent_names(names)}
        wanted = {n: count for n, count in wanted.items() if count >= 1}
        out = []
        for m in self.mentions:
            words = set(_folded_words(m.text))
            for n in wanted:
                if not words or not words <= set(_folded_words(n)):
                    continue
                near = tuple(e for e in m.entities
                             if not written_like(n, e.label, index) and _written_words(n, e.label, index) == wanted[n])
                if near:
                    out.append((n, replace(m, entities=near)))
        return tuple(out)

    def with_mentions(self, mentions: Sequence[Mention]) -> "QuestionReading":
        """The reading with ``mentions`` added after its own."""
        return replace(self, mentions=(*self.mentions, *mentions)) if mentions else self

    def _absent_names(self, names: Sequence[str]) -> list[str]:
        names = [re.split(r"['\u2019]s\b", n, maxsplit=1)[0] for n in names]
        names = [_YEAR_AFTER.sub("", n).strip() or n for n in names]
        if self.compares:
            # a draft that wrote two compared names as one ("[ENT: Cherry vs Transylvania]")
            # lacks neither of them: each side of the word setting them against each other
            # is a name of its own
            names = [part for n in names for part in _JOINED.split(n)]
        return names

    def about(self, names: Sequence[str], index=None) -> "QuestionReading":
        """The reading with only the mentions that are where ``names`` are written: a name
        the store was found to lack, read here as typed ("Australian" as "australians",
        "obiwan" as "obi wan"). Composing after such a refusal is to find that name; a
        mention elsewhere in the question ("movies" as *Movie Movie*, "Her" of a renamed
        title) would answer a question about something else. A draft's variable
        ("[ENT: name ?king]") names nothing, and a name the question writes nowhere (the
        draft's guess at the answer: "[ENT: Latin]" for "what did the ancient romans
        speak") is the draft's own: neither restricts anything. Nor, with ``index``, does a
        name all of whose words are words of the store's relations ("[ENT: state]" for "what
        city and state is yale located in"): it writes what is asked, not of whom."""
        wanted = [n for n in names if n.strip() and "?" not in n and self.writes(n)
                  and (index is None or _name_words(n, index))]
        if not wanted:
            return self
        words = {w for n in wanted for w in _folded_words(n) if w not in _FUNCTION_WORDS}
        letters = ["".join(_folded_words(n)) for n in wanted]
        # ... or where the question names the entity whose whole name the draft wrote in a
        # derived form ("serbs" of *Serbia*, which the draft wrote "[ENT: Serbian]")
        kept = tuple(m for m in self.mentions if _written_alike(_folded_words(m.text), words, letters)
                     or any(writes_whole(n, m.best.label or "") for n in wanted))
        if not kept:
            # the draft's names are words the question writes for something else ("[ENT:
            # body_of_water]" of "what body of water does st lawrence river flow into"): a
            # name of two words or more the question writes whole, each word in its entity's
            # label, is what it asks about; a single word ("movies") could be any title's
            kept = tuple(m for m in self.mentions if len(_name_words(m.text, index)) >= 2
                         and written_like(m.text, m.best.label or "", index))
        return replace(self, mentions=kept,
                       set_aside=self.set_aside | {m.best.iri for m in self.mentions if m not in kept})

    def writes(self, name: str) -> bool:
        """Whether the question writes ``name``, as typed: one of its words (not a function
        word) or its plural ("comedies" of "Comedy"), a word of four letters or more inside
        another ("australians" of "Australian"), or its letters as a run of two to four of
        the question's words ("AnnLee" of "ann lee")."""
        words = {w for w in _folded_words(name) if w not in _FUNCTION_WORDS}
        letters = "".join(_folded_words(name))
        text = _folded_words(self.text)
        runs = {"".join(text[i:j]) for i in range(len(text)) for j in range(i + 2, min(i + 5, len(text) + 1))}
        return letters in runs or any(_written_alike([form], words, [letters]) for w in text
                                      if w not in _FUNCTION_WORDS for form in (w, *singulars(w)))

    @property
    def written_names(self) -> frozenset[str]:
        """The entities the question names: bracketed, or past its first word written as
        a name the store holds ("in German", "without Adrian Grenier", "horror") or as its
        plural ("dramas" of Drama); not a word inside a longer name ("Romantic" of "Born
        Romantic"). A candidate that leaves one unused leaves out part of
        what was asked (a feature; a name linked only by meaning is not counted)."""
        return frozenset(m.best.iri for m in self._written())

    @property
    def written_mentions(self) -> tuple[frozenset[str], ...]:
        """For each name the question writes (as :attr:`written_names` counts them), every
        entity that bears it: "horror" is a tag and a genre, and a candidate tied to either
        uses the one name written. A namesake bears the best entity's label, not a part of it
        ("Born Romantic" is not the tag *romantic*)."""
        return tuple(frozenset([m.best.iri] + [e.iri for e in m.entities[1:] if e.match != "vector"
                                               and _folded_words(e.label) == _folded_words(m.best.label)])
                     for m in self._written())

    def _written(self) -> list[Mention]:
        # a mention inside a longer one's span is a word of that name ("Romantic" of "Born
        # Romantic"), not a name of its own; a longer one that adds only an article written
        # in lower case ("the Italian" of "the Italian-language films", the title *The
        # Italian*) leaves the name after the article written: "The" of a title is capital
        return [m for m in self.mentions if not any(
                    o.span[0] <= m.span[0] and m.span[1] <= o.span[1] and o.span != m.span
                    and not (o.span[1] == m.span[1] and _LOWER_ARTICLE.fullmatch(self.text[o.span[0]:m.span[0]]))
                    for o in self.mentions)
                and (m.bracketed or (m.span[0] > 0 and len(m.text) >= 3 and (
                    m.best.match != "vector" or m.best.label.lower() in singulars(m.text.lower()))))]

    @property
    def asks_order(self) -> bool:
        """Whether the question has a word asking for the first or last of several."""
        return bool(self.cues & ORDER_CUES)

    @property
    def compares(self) -> bool:
        """Whether the question has a word that compares two named things (a feature)."""
        return bool(self.cues & COMPARISON_CUES) and len(self.mentions) >= 2

    @property
    def negates(self) -> bool:
        """Whether the question has a word that denies (a feature: negated constraints are
        enumerated only then)."""
        return bool(self.cues & NEGATION_CUES)

    @property
    def denies(self) -> bool:
        """Whether the question denies: a word that does ("not", "without", "aren't"), or
        "other than" ("than" alone compares: "how many more films did A direct than B")."""
        return bool(self.cues & (NEGATION_CUES - {"other", "than"})) or {"other", "than"} <= self.cues

    def in_denial(self, iri: str) -> bool:
        """Whether the question writes the entity ``iri`` after its word that denies, where
        a denial reaches ("Which X films aren't tagged black comedy": the tag, not X). An
        entity it does not write is not known to be out of reach."""
        spans = [m.span for m in self.mentions if any(e.iri == iri for e in m.entities)]
        return self.denial_at is None or not spans or any(start >= self.denial_at for start, _ in spans)

    @property
    def order_ascending(self) -> bool | None:
        """True when the ordering words ask for the first by value, False for the last,
        None when there are none or both kinds (a feature that breaks ties)."""
        asked = self.cues & ORDER_CUES
        ends = {w in ASCENDING_CUES for w in asked}
        return next(iter(ends)) if len(ends) == 1 else None

    @property
    def asks_count(self) -> bool:
        """Whether the question asks how many (a feature: counts are enumerated only then,
        and a comparison it asks answers with a number)."""
        return {"how", "many"} <= self.cues or "number" in self.cues

    @property
    def asks_yes_no(self) -> bool:
        """Whether the question opens as a yes/no question does ("is", "did", "were"): a
        comparison it asks answers yes or no (a feature)."""
        first = _WORD.search(self.text)
        return bool(first) and first.group().lower() in YES_NO_OPENINGS

    @property
    def compares_lower(self) -> bool | None:
        """True when the comparatives ask for the lower (earlier) of two values, False for
        the higher, None when there are none or both kinds (a feature: only that end's
        comparison is offered)."""
        lower, higher = bool(self.cues & LOWER_COMPARATIVES), bool(self.cues & HIGHER_COMPARATIVES)
        return None if lower == higher else lower

    @property
    def compares_counts(self) -> bool:
        """Whether a word compares how many values two things hold ("more", "fewer"): a
        comparative of values alone ("later") asks for no count comparison (a feature)."""
        return bool(self.cues & COUNT_COMPARATIVES)

    @property
    def conjoins(self) -> bool:
        """Whether the question has a word that joins two roles of one answer (a feature)."""
        return bool(self.cues & CONJUNCTION_CUES)

    @property
    def asks_sharers(self) -> bool:
        """Whether the question has a word asking for others that share something with
        the one it names (a feature)."""
        return bool(self.cues & SHARING_CUES)

    @property
    def may_constrain(self) -> bool:
        """Whether a constraint or an ordering could be composed at all: a second mention, a
        constant, an ordering word, or a second role. A plain chain question has none."""
        return len(self.mentions) > 1 or bool(self.values) or self.asks_order or self.conjoins

    def to_dict(self) -> dict:
        return {"text": self.text, "cues": sorted(self.cues), "form": self.form,
                "mentions": [{"text": m.text, "span": list(m.span), "bracketed": m.bracketed,
                              "entities": [[e.iri, e.label, round(e.score, 4), e.match] for e in m.entities[:3]]}
                             for m in self.mentions],
                "values": [{"op": v.op, "low": v.low, "high": v.high, "year": v.year, "words": v.words}
                           for v in self.values],
                **({"set_aside": sorted(self.set_aside)} if self.set_aside else {})}


def unbracketed(question: str) -> tuple[str, list[tuple[int, int]]]:
    """``question`` without its square brackets, and the spans the brackets marked, in the
    text without them."""
    out, spans, shift = [], [], 0
    last = 0
    for start, end in bracketed_spans(question):
        out.append(question[last:start])
        inner = question[start + 1:end - 1]
        new_start = start - shift
        out.append(inner)
        spans.append((new_start, new_start + len(inner)))
        shift += 2
        last = end
    out.append(question[last:])
    return "".join(out), spans


def read_question(index, question: str, *, k: int = 20, per_mention: int = 5) -> QuestionReading:
    """``question`` read once with the store's ``index``: every name it mentions linked to
    the store's entities (bracketed names each on their own, the rest from the whole
    question), the constants it writes, and its cue words."""
    text, marked = unbracketed(question.strip())
    by_span: dict[tuple[int, int], list] = {}
    for start, end in marked:
        for c in index.link(text[start:end], k=per_mention):
            if c.match == "vector":
                continue  # a bracketed name is a name: a neighbour in meaning is someone else
            by_span.setdefault((start, end), []).append(c)
    for c in index.link_question(text, k=k):
        span = c.span
        if span is None or any(a <= span[0] and span[1] <= b for a, b in marked):
            continue  # a bracketed name was linked whole
        by_span.setdefault(tuple(span), []).append(c)
    _add_typed_names(index, text, by_span)
    mentions = []
    for span, candidates in by_span.items():
        entities = tuple(LinkedEntity(c.iri, c.label or c.iri, float(c.score), c.match)
                         for c in sorted(candidates, key=lambda c: -c.score)[:per_mention])
        mentions.append(Mention(text[span[0]:span[1]], span, entities, bracketed=span in marked))
    mentions.sort(key=lambda m: (not m.bracketed, -m.best.score))
    # a constant is read from the words outside the names ("1984" the film stays a name
    # only when bracketed)
    masked = list(text)
    for m in mentions:
        if m.bracketed or not _is_number(m.text):
            for i in range(*m.span):
                masked[i] = " "
    values = tuple(read_value_constraints("".join(masked)))
    # a title's words are not cues ("After Office Hours", "The Last Emperor"): the words of
    # a name written as one (bracketed, or several words capitalized) are left out
    outside_titles = list(text)
    for start, end in list(marked) + [m.span for m in mentions if len(m.text.split()) > 1 and m.text[:1].isupper()]:
        outside_titles[start:end] = " " * (end - start)
    outside = "".join(outside_titles)
    cues = frozenset("not" if w.endswith("n't") else w for w in (x.lower() for x in _WORD.findall(outside))
                     if w in _ALL_CUES or w.endswith("n't"))
    denial = next((m.start() for m in _WORD.finditer(outside) if _denies(m.group().lower(), outside[m.end():])), None)
    return QuestionReading(question, text, tuple(mentions), values, cues, answer_form(outside, "chain"), denial)


def _denies(word: str, after: str) -> bool:
    """Whether ``word`` (followed by ``after``) denies: "not", "without", "aren't", or
    "other" of "other than"."""
    if word == "other":
        return after.lstrip().lower().startswith("than")
    return word.endswith("n't") or word in NEGATION_CUES - {"other", "than"}


# A name typed as people type it ("celtics", "the eu", "lincoln", "united states") may match
# no label or alias: the words are then read by meaning against the entity index. Only a
# neighbour this close counts (names measured on WebQSP's dev-train half sit at 0.78-0.95;
# the nearest wrong entity of a word that names nothing under 0.6) ...
TYPED_NAME_SIMILARITY = 0.72
# ... or, when the typed words write the whole name in a derived form (a demonym, "australians"
# of Australia at 0.70; initials, "afl" of American Football League at 0.61), one this close.
# A common word that is one word of a longer name ("first" of First Shot, "king" of The Man
# Who Would Be King) needs the first bar: at this one, 45 of WebQSP dev-train's 467
# questions gained such a mention, and 48 of 228 MetaQA combination questions.
WHOLE_NAME_SIMILARITY = 0.6
_FUNCTION_WORDS = frozenset("""
a an the this that these those of in on at to for by with from into about as and or but not no is are was were
be been being am has have had do does did can could will would should may might must who whom whose what which
when where why how i me my we our you your he him his she her it its they them their there here some any all
each every other such than then so very just only name names list give tell show find play plays played
""".split())


# the most words (function words included) a span read by meaning has
_TYPED_SPAN_WORDS = 5


def _add_typed_names(index, text: str, by_span: dict) -> None:
    """Spans of one to three content words that no name found above covers, linked by
    meaning: each becomes a mention with its close neighbours (match ``vector``). The
    function words between them are not counted ("fellowship of the ring" is two content
    words: *The Lord of the Rings: The Fellowship of the Ring*), up to
    ``_TYPED_SPAN_WORDS`` words in all."""
    if not index.can_search("entities"):
        return
    words = [(m.start(), m.end(), m.group().lower()) for m in _WORD.finditer(text)]
    covered = [span for span in by_span if any(c.match != "vector" for c in by_span[span])]
    spans = []
    for i in range(len(words)):
        for j in range(i, min(i + _TYPED_SPAN_WORDS, len(words))):
            chunk = words[i:j + 1]
            if sum(w not in _FUNCTION_WORDS for *_, w in chunk) > 3:
                break
            if chunk[0][2] in _FUNCTION_WORDS or chunk[-1][2] in _FUNCTION_WORDS or \
                    any(_is_number(w) for *_, w in chunk):  # a number is a value, read as one
                continue
            if all(w in _FUNCTION_WORDS or index.relation_word(w) for *_, w in chunk):
                continue  # "currency", "president": what is asked about, read by the chains
            span = (chunk[0][0], chunk[-1][1])
            if any(a < span[1] and span[0] < b for a, b in covered):
                continue  # words of a name found by its name are that name's
            spans.append(span)
    if not spans:
        return
    from indexer import Candidate

    hits = index.search_vectors("entities", index.embed([text[a:b] for a, b in spans]), 3)
    named = {c.iri for span in covered for c in by_span[span]}
    for span, found in zip(spans, hits):
        typed = text[span[0]:span[1]]
        close = [h for h in found if h.iri not in named and written_like(typed, h.label or "", index)
                 and _joined_as_written(typed, h.label or "")
                 and (h.score >= TYPED_NAME_SIMILARITY
                      or (h.score >= WHOLE_NAME_SIMILARITY and writes_whole(typed, h.label or ""))
                      or spells_initials(typed, h.label or ""))]
        for h in close:
            by_span.setdefault(span, []).append(
                Candidate(h.iri, h.label, round(0.6 * float(h.score), 6), text[span[0]:span[1]], "vector",
                          similarity=float(h.score), span=span))
    # of two spans read by meaning, one inside the other, the one with more of its words
    # written in the name it was read as stands ("alice paul" as Alice Stokes Paul, not
    # "paul" as Chris Paul), and of two alike the closer ("la kings", not "la kings win")
    by_meaning = [span for span in by_span if all(c.match == "vector" for c in by_span[span])]
    best = {span: max(c.score for c in by_span[span]) for span in by_meaning}
    written = {span: _written_words(text[span[0]:span[1]], max(by_span[span], key=lambda c: c.score).label or "", index)
               for span in by_meaning}
    for span in by_meaning:
        for other in by_meaning:
            if other != span and other in by_span and span in by_span and \
                    span[0] <= other[0] and other[1] <= span[1]:
                del by_span[other if (written[span], best[span]) >= (written[other], best[other]) else span]


def _joined_as_written(typed: str, label: str) -> bool:
    """Whether the function words ``typed`` holds between its first and last word are words
    of ``label``: "fellowship of the ring" joins its words as *The Lord of the Rings: The
    Fellowship of the Ring* does; "language do the maasai" is no name's (*Maasai
    Language*), but a question's words around one."""
    words = _folded_words(typed)
    own = set(_folded_words(label))
    return all(w in own for w in words[1:-1] if w in _FUNCTION_WORDS)


def written_like(typed: str, label: str, index=None) -> bool:
    """Whether every word of ``typed`` that is no function word (nor, with ``index``, a word
    of the store's relation labels) is written in ``label``: as one of its words, as the
    start of one ("jamaican", "portuguese" of Jamaica, Portugal), or as its initials ("uk",
    "the eu", "us" of United Kingdom, European Union, United States of America; all of
    them, however many: "nafta"). Meaning
    alone would take "zorblax mountains" for the Rocky Mountains: a name the store lacks."""
    words = _name_words(typed, index)
    return bool(words) and _written_words(typed, label, index) == len(words)


def writes_whole(typed: str, label: str) -> bool:
    """Whether ``typed`` writes the whole of ``label`` (but its function words) in a form
    derived from it: each word extended ("australians" of Australia) or written short
    ("st" of Saint), or all of them as its initials ("afl" of American Football League).
    A name typed as written the linker finds by itself; a common word that is a title of its
    own ("without", Me Without You) is not taken for it."""
    words = [w for w in _folded_words(typed) if w not in _FUNCTION_WORDS]
    own = [w for w in _folded_words(label) if w not in _FUNCTION_WORDS]
    if not own or not words:
        return False
    if len(own) > 1 and _initials(own) in words:
        return True
    return all(any((len(w) > len(o) >= 4 and w.startswith(o)) or _shortened(w, o) for w in words) for o in own)


def spells_initials(typed: str, label: str) -> bool:
    """Whether ``typed`` is one word that spells the initials of all of ``label``'s three
    words or more ("nafta" of North American Free Trade Agreement): so many letters in order
    name the label by themselves, however far its meaning is from the letters' (0.46 there)."""
    words = _folded_words(typed)
    own = [w for w in _folded_words(label) if w not in _FUNCTION_WORDS]
    return len(words) == 1 and len(own) >= 3 and words[0] == _initials(own)


def _initials(words: Sequence[str]) -> str:
    """The first letters of ``words`` but their function words, run together."""
    return "".join(w[0] for w in words if w not in _FUNCTION_WORDS)


def _name_words(typed: str, index=None) -> list[str]:
    """The words of ``typed`` that may be part of a name: no function words, nor (with
    ``index``) words of the store's relation labels."""
    return [w for w in _folded_words(typed) if w not in _FUNCTION_WORDS
            and not (index is not None and index.relation_word(w))]


def _written_in(word: str, label: str) -> bool:
    own = _folded_words(label)
    initials = _initials(own)
    return word in own or any(_common_prefix(word, o) >= max(4, int(0.6 * len(word))) or _shortened(word, o)
                              for o in own) or (2 <= len(word) <= 4 and initials.startswith(word)) \
        or (len(word) >= 2 and word == initials)


def _written_words(typed: str, label: str, index=None) -> int:
    """How many of ``typed``'s name words ``label`` writes. Beside a word ``label`` writes
    whole, a given name written shorter or longer counts too: a word of three letters or
    more that begins one of its words two letters or more longer ("ben franklin" of
    Benjamin Franklin, "alex" of Alexander), or that one of its words of three letters or
    more begins, two letters or more shorter ("vince scully" of Vin Scully); not a plural's
    stem ("car" of *Cars*). Alone, such a word would begin too many names. And where the
    label writes middle names as initials, the words spelled out for them count
    (:func:`_spelled_initials`); where the typed name writes them as initials, the letters
    (:func:`_typed_initials`)."""
    words = _name_words(typed, index)
    own = _folded_words(label)
    whole = [w for w in words if w in own]
    spelled = _spelled_initials(words, own) | _typed_initials(words, own)
    return sum(_written_in(w, label) or w in spelled
               or (bool(whole) and w not in whole and any(_given_name_form(w, o) for o in own))
               for w in words)


def _given_name_form(typed: str, own: str) -> bool:
    """Whether ``typed`` and a label's word ``own`` are one given name written shorter and
    longer: the shorter, of three letters or more, begins the longer, two letters or more
    longer ("ben" of Benjamin, "vince" of Vin); not a plural's stem ("car" of *Cars*)."""
    short, long_ = sorted((typed, own), key=len)
    return len(short) >= 3 and len(long_) >= len(short) + 2 and long_.startswith(short)


def _spelled_initials(words: Sequence[str], own: Sequence[str]) -> set[str]:
    """The typed ``words`` that spell out, one for one and in order, the one-letter words of
    a label ("george herbert walker bush" of George H. W. Bush): only where the typed name
    writes every other word of the label whole and nothing else, so that "john fish" is not
    John F. Kennedy, nor "george herbert walker bush" George W. Bush."""
    initials = [o for o in own if len(o) == 1]
    if not initials or any(o not in words for o in own if len(o) > 1 and o not in _FUNCTION_WORDS):
        return set()
    rest = [w for w in words if w not in own]
    if len(rest) != len(initials) or any(len(w) < 2 or w[0] != i for w, i in zip(rest, initials)):
        return set()
    return set(rest)


def _typed_initials(words: Sequence[str], own: Sequence[str]) -> set[str]:
    """The typed one-letter ``words`` that stand, one for one and in order, for the words of
    a label the typed name leaves out ("billy d williams" of Billy Dee Williams): the
    converse of :func:`_spelled_initials`, and as strict, every other typed word being one
    of the label's ("billy d smith" is not Billy Dee Williams, nor "billy d williams"
    Billy Williams)."""
    letters = [w for w in words if len(w) == 1 and w not in own]
    if not letters or any(w not in own for w in words if len(w) > 1):
        return set()
    untyped = [o for o in own if o not in words and o not in _FUNCTION_WORDS]
    if len(untyped) != len(letters) or any(o[0] != letter for o, letter in zip(untyped, letters)):
        return set()
    return set(letters)


def _shortened(a: str, b: str) -> bool:
    """Whether one word is the other written short, as its first and last letters ("st"
    of "saint", "mt" of "mount", "jr" of "junior"); longer short forms would match words
    ("sat" of "saint")."""
    short, long_ = sorted((a, b), key=len)
    return len(short) == 2 and len(long_) >= 4 and short[0] == long_[0] and short[-1] == long_[-1]


def _written_alike(written: Sequence[str], words: set[str], letters: Sequence[str]) -> bool:
    """Whether the folded ``written`` words are where a name of ``words`` (and ``letters``,
    each name's letters run together) is written: a word in common, or the letters of one
    inside the other's. A name written joined ("obiwan" of "obi wan") holds the other's
    letters; a letter or two ("O" of "O'Malley") is inside any name, and locates nothing."""
    own = "".join(written)
    return bool(words & set(written)) or any(
        own == n or (min(len(own), len(n)) >= 4 and (own in n or n in own)) for n in letters if own)


def _folded_words(text: str) -> list[str]:
    import unicodedata

    text = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
    # an apostrophe inside a name is often left out ("l'ouverture" of Louverture); a
    # possessive's "'s" is no part of the name
    return [re.sub(r"['\u2019]s$", "", w.lower()).replace("'", "").replace("\u2019", "")
            for w in _WORD.findall(text)]


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _is_number(text: str) -> bool:
    return text.replace(",", "").replace(".", "").strip().isdigit()


__all__ = ["CUE_WORDS", "ORDER_CUES", "ASCENDING_CUES", "LOWER_COMPARATIVES", "HIGHER_COMPARATIVES", "CONJUNCTION_CUES", "NEGATION_CUES", "COMPARISON_CUES", "COUNT_COMPARATIVES", "LinkedEntity", "Mention", "QuestionReading", "read_question", "unbracketed", "written_like"]
