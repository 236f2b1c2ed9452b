"""What shape a question has, from its English form alone. Pure functions.

Chains ("which films did X direct") are what every method answers; the other shapes are
told by a few function words that English uses for them, whatever the knowledge base:

* **count**: "how many …", "the number of …", "what number of …";
* **boolean**: a question opening with an auxiliary verb ("is", "does", "did", "was" …)
  that asks for no thing with a wh-word ("was X born in which city" is a chain; "did X
  work at a university where he studied" and "are there winners who …" are yes/no);
* **comparison**: a comparative ("larger", "more", "earlier" …) with two options ("X or
  Y") or a "than" ("is X older than Y"); in the boolean form the answer is yes or no;
* **superlative**: a superlative ("the highest", "the most recent", "the oldest" …).

A comparative or superlative word says which way to order: up for numbers (``max``) and
for dates (``date_max``: later). "Older" is the larger age but the earlier birth date, so
each word carries both directions.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, asdict
from typing import Sequence

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
# words and the punctuation that ends a phrase
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'-]*|[,;:?!()\[\]]")
_BOOLEAN_OPENING = {"is", "are", "was", "were", "does", "do", "did", "has", "have", "had", "can", "could",
                    "will", "would", "should", "isn't", "aren't", "wasn't", "doesn't", "didn't"}
# "can you name …", "could you tell me …": a request for things (a chain); "would you call
# X a drama", "would you say X …": a yes/no question put to the reader
_REQUEST_VERBS = {"name", "list", "tell", "give", "show", "find", "provide", "identify", "mention", "enumerate",
                  "get", "help", "recommend", "suggest", "point", "look", "search", "fetch", "return", "bring"}
# a statement with a tag that asks whether it holds: "X directed Y, didn't they?", "X is a
# drama, isn't it?", "X came out in 1999, right?"
_TAG_QUESTION = re.compile(
    r",\s*(?:(?:is|are|was|were|do|does|did|has|have|had|can|could|will|would|wo|ca|should)(?:n't|\s+not)?"
    r"\s+(?:it|he|she|they|there|that|this|you|we|i|one)(?:\s+not)?|right|correct|true|no|yes|yeah)\s*\?\s*$",
    re.I)
_THAN_A_NUMBER = re.compile(r"\bthan\s+(?:about\s+|around\s+)?(?:[\d$€£]|(?:a|one|two|three|four|five|six|seven|"
                            r"eight|nine|ten|twenty|fifty|a few|several|hundred|thousand|million|billion)\b)")
_WH_WORDS = {"what", "which", "who", "whom", "whose", "where", "when", "why", "how"}
_COUNT = re.compile(r"\bhow many\b|\b(?:the|what) (?:total )?number of\b|\b[Cc]ount (?:the|all)\b|\bcount of\b", re.I)
# "Count" with a capital inside a sentence, or "Count of" opening it, is a title ("the son
# of Count of Evreux"): the verb that asks for a count is "count the …", "count all …"
_COUNT_TITLE = re.compile(r"(?<=[A-Za-z,] )Count of\b|^\W*Count of\b")

_BEFORE_VERBS = ("predate", "predates", "predated", "antedate", "antedates", "antedated")
_AFTER_VERBS = ("postdate", "postdates", "postdated")
# word: (direction over numbers, direction over dates)
_UP, _DOWN = ("max", "max"), ("min", "min")
_OLDER, _YOUNGER = ("max", "min"), ("min", "max")
COMPARATIVES = {
    **dict.fromkeys(["larger", "bigger", "higher", "taller", "longer", "greater", "heavier", "deeper", "wider",
                     "more", "later", "newer", "richer", "faster", "hotter", "busier", "louder", "populous"], _UP),
    **dict.fromkeys(["smaller", "lower", "shorter", "lighter", "shallower", "narrower", "fewer", "less", "earlier",
                     "poorer", "slower", "colder", "sooner", "before"], _DOWN),
    "older": _OLDER, "elder": _OLDER, "younger": _YOUNGER, "after": _UP,
    # verbs of time: "does X predate Y" asks whether X came before Y
    **dict.fromkeys(_BEFORE_VERBS, _DOWN), **dict.fromkeys(_AFTER_VERBS, _UP),
}
# comparatives that compare only in a yes/no question ("was X born before Y"); elsewhere a chain's words
_YES_NO_COMPARATIVES = {"before", "after", *_BEFORE_VERBS, *_AFTER_VERBS}
SUPERLATIVES = {
    **dict.fromkeys(["largest", "biggest", "highest", "tallest", "longest", "greatest", "heaviest", "deepest",
                     "widest", "most", "latest", "newest", "richest", "fastest", "hottest", "busiest",
                     "loudest", "last"], _UP),
    **dict.fromkeys(["smallest", "lowest", "shortest", "lightest", "shallowest", "narrowest", "fewest", "least",
                     "earliest", "poorest", "slowest", "coldest", "first"], _DOWN),
    "oldest": _OLDER, "eldest": _OLDER, "youngest": _YOUNGER,
}
# words that order by time: the value compared is a date (or a year)
TEMPORAL = {"recent", "earlier", "later", "older", "newer", "younger", "first", "last", "before", "after",
            "earliest", "latest", "oldest", "newest", "youngest", "elder", "eldest", "sooner",
            *_BEFORE_VERBS, *_AFTER_VERBS}
# "more recent(ly)" and "most recent(ly)": later
_RECENT = re.compile(r"\b(more|most) recent(ly)?\b", re.I)
# words that end the phrase naming what is compared ("the larger population, India or Nepal")
_PHRASE_STOP = {"or", "than", "and", "of", "in", "on", "at", "by", "for", "to", "with", "from", "between",
                "among", "is", "are", "was", "were", "has", "have", "had", "did", "does", "do", "which", "who",
                "what", "that"}
_DETERMINERS = {"the", "a", "an", "its", "their", "his", "her"}


@dataclass(frozen=True)
class QuestionShape:
    """A question's shape. ``kind``: chain | count | boolean | comparison | superlative.
    ``cue`` is the comparative or superlative word, ``directions`` its (numbers, dates)
    directions, ``phrase`` the words that name what is compared ("population"), and
    ``yes_no`` marks a comparison asked as a yes/no question ("is X older than Y")."""

    kind: str
    cue: str | None = None
    directions: tuple[str, str] | None = None
    phrase: str = ""
    yes_no: bool = False
    words: tuple[str, ...] = field(default=(), repr=False)

    @property
    def temporal(self) -> bool:
        """The cue orders by time ("earlier", "the most recent", "older")."""
        return bool(self.cue) and bool(TEMPORAL & set(self.cue.split()))

    def direction(self, *, dates: bool) -> str:
        return (self.directions or _UP)[1 if dates else 0]

    def to_dict(self) -> dict:
        out = asdict(self)
        out.pop("words")
        return {k: v for k, v in out.items() if v not in (None, "", False)}


_BRACKETED = re.compile(r"\[[^\[\]]*\]")


def without_names(question: str, spans: Sequence[tuple[int, int]] = ()) -> str:
    """``question`` with the names it writes blanked: bracketed ones ("[More Dead Than
    Alive]") and those at ``spans`` (character offsets of linked mentions), so a title's
    words do not read as the question's ("the most", "than")."""
    chars = list(question)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    text = "".join(chars)
    return _BRACKETED.sub(lambda m: "[" + " " * (len(m.group(0)) - 2) + "]", text)


def detect_shape(question: str, names: Sequence[tuple[int, int]] = ()) -> QuestionShape:
    """The shape of ``question`` (see the module docstring); the words of the names it
    writes (in brackets, or at ``names``' spans) do not count."""
    question = without_names(question, names)
    words = tuple(w.lower() for w in _WORD.findall(question))
    tokens = tuple(t.lower() for t in _TOKEN.findall(question))
    if not words:
        return QuestionShape("chain")
    if _COUNT.search(_COUNT_TITLE.sub("title", question)):
        return QuestionShape("count", words=words)
    # "can you name a film …" is a request, and "is X a man or a woman" a choice: chains
    # a name opens "[X] was the director of which films"; a wh-word anywhere asks for a thing
    requested = len(words) > 2 and words[1] == "you" and words[2] in _REQUEST_VERBS
    # "[X]: is that a drama?", "Battleground: is that a romance?" name their topic first
    # and ask after the colon
    clauses = {question, _TOPIC_FIRST.sub("", question)}
    opens_yes_no = any(c.strip() and _WORD.findall(c)[0].lower() in _BOOLEAN_OPENING and not c.lstrip().startswith("[")
                       for c in clauses if _WORD.findall(c))
    yes_no = ((opens_yes_no and not requested)
              or bool(_TAG_QUESTION.search(question))) and not _asks_wh(tokens)
    recent = _RECENT.search(question)
    if recent:
        cue, directions = recent.group(0).lower(), _UP
        superlative = recent.group(1).lower() == "most"
        i = _index_of(tokens, "recent") if "recent" in tokens else _index_of(tokens, "recently")
        return _ordering(tokens, words, "superlative" if superlative else "comparative", cue, directions, i, yes_no)
    for i, w in enumerate(tokens):
        if w in SUPERLATIVES and _is_superlative_use(tokens, i):
            return _ordering(tokens, words, "superlative", w, SUPERLATIVES[w], i, yes_no)
    for i, w in enumerate(tokens):
        if w in COMPARATIVES and _is_comparative_use(question, tokens, i):
            return _ordering(tokens, words, "comparative", w, COMPARATIVES[w], i, yes_no)
    if yes_no and "or" not in words:
        return QuestionShape("boolean", words=words)
    return QuestionShape("chain", words=words)


_TOPIC_FIRST = re.compile(r"^[^:?\[\]]*(?:\[ *\][^:?\[\]]*)?:\s*")
_COUNT_WORDS = re.compile(r"\bhow many\b|\b(?:what is |what's |what are )?the (?:total )?number of\b|"
                          r"\bwhat (?:total )?number of\b|^\W*count (?:the|all(?: the)?)\b", re.I)
# "how many times did X play Y in a film": the times are the films (or whatever the rest
# names), so the list asked is of those
_TIMES = re.compile(r"^\W*how many times (did|has|have|was|were) (.+?) in (?:a|an) ([a-z]+)\b(.*)$", re.I)


# words after a wh-word that make it open a relative clause ("… the team which won …",
# "… a university where he studied"), not ask for a thing ("… born in which city")
_CLAUSE_WORDS = {"is", "are", "was", "were", "be", "been", "do", "does", "did", "has", "have", "had", "can", "could",
                 "will", "would", "may", "might", "also", "not", "never", "still", "first", "the", "a", "an",
                 "his", "her", "its", "their", "he", "she", "it", "they", "i", "we", "you", "there", "this",
                 "that", "these", "those"}


def _asks_wh(tokens: Sequence[str]) -> bool:
    """A wh-word of ``tokens`` asks for something ("did X direct which films", "was X born
    where?"), rather than opening a relative or time clause ("did X study at a university
    where he taught", "are there winners who were educated at …")."""
    for i, w in enumerate(tokens):
        if w not in _WH_WORDS:
            continue
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        if not nxt or not nxt[0].isalpha():
            return True  # "… born where?", "… which one, X or Y"
        if i < 2:
            return True  # "is what …", "did who …"
        if nxt in _CLAUSE_WORDS or nxt.endswith("ed"):
            continue  # "… who was …", "… when LeBron joined …", "… which won …"
        if w in ("which", "what"):
            return True  # "… born in which city"
    return False


def listing_question(question: str) -> str:
    """A count question asked as the list it counts: "how many films did X act in" →
    "which films did X act in". A small model writes the list's query far more often
    right than a count's."""
    times = _TIMES.match(question)
    if times:
        aux, clause, noun, rest = times.groups()
        return " ".join(f"in which {noun}s {aux} {clause}{rest}".split())
    return " ".join(_COUNT_WORDS.sub("which", question, count=1).split())


def without_superlative(question: str, cue: str) -> str:
    """The chain a superlative orders, asked without the superlative: "what is the oldest
    film starring X" → "what is the film starring X". With the word in it a small model
    writes it into the query ("[REL: oldest]", an ORDER BY over the wrong variable)."""
    words = cue.split()
    pattern = r"\b(?:most|least)\s+" + re.escape(words[-1]) if words[0] in ("most", "least") and len(words) > 1 \
        else r"\b" + r"\s+".join(re.escape(w) for w in words)
    text = re.sub(pattern + r"\b\s*", "", question, count=1, flags=re.I)
    text = re.sub(r"\s+the\s*([?.!]|$)", r"\1", text)  # "… is the most recent?" → "… is?"
    return " ".join(text.split())


def is_superlative(cue: str | None) -> bool:
    """``cue`` is a superlative ("largest", "most recent"), not a comparative."""
    return bool(cue) and (cue in SUPERLATIVES or cue.startswith("most "))


def _ordering(tokens: tuple[str, ...], words: tuple[str, ...], form: str, cue: str, directions, at: int | None,
              yes_no: bool) -> QuestionShape:
    phrase = attribute_phrase(tokens, at) if at is not None else ""
    # "which is older, X or Y", "which of X and Y came first": the options are named
    named_options = "or" in tokens or tuple(words[:2]) in (("which", "of"), ("who", "of")) or \
        _options_first(tokens) or _options_after(tokens, at)
    if form == "superlative" and not named_options:
        return QuestionShape("superlative", cue, directions, phrase, False, words)
    # "was X or Y made first", "is X or Y older": a choice between the two, not yes or no
    # (but "is X older than Y or not" is)
    choice = any(w == "or" and (i + 1 == len(tokens) or tokens[i + 1] != "not") for i, w in enumerate(tokens))
    return QuestionShape("comparison", cue, directions, phrase, yes_no and not choice, words)


def _index_of(words: tuple[str, ...], word: str) -> int | None:
    try:
        return words.index(word)
    except ValueError:
        return None


def _is_superlative_use(words: tuple[str, ...], i: int) -> bool:
    """"the highest", "which … first"; not "first name" or "at least"."""
    w = words[i]
    before = words[i - 1] if i else ""
    if w in ("first", "last"):
        # "who was born first, X or Y", "which of X and Y came first": the word ends a
        # clause of a question that names its options, or of one that asks which thing
        # ("which film did X direct first"); elsewhere "first" is too often a chain's word
        # ("where was X released first")
        ends = i == len(words) - 1 or words[i + 1] in (",", "?", ";", ":", "!")
        if ends:
            return "or" in words or tuple(words[:2]) in (("which", "of"), ("who", "of")) or _asks_which_thing(words)
        # "the last film X wrote", "X's first novel": the one first or last in time; not
        # "the first name", "the last time", nor inside a yes/no question ("was the first
        # album of X released in 2012": yes or no about that one)
        return (before == "the" or _possessive(before)) and words[i + 1][0].isalpha() \
            and words[i + 1] not in _NOT_ORDERED and words[0] not in _BOOLEAN_OPENING
    if _possessive(before):
        return True  # "X's earliest film", "their largest city"
    if w in ("most", "least"):
        return before in ("the", "which", "what", "who") or (i + 1 < len(words) and before != "at")
    return before in ("the", "its", "their") or i + 1 == len(words) or words[0] in ("which", "what", "who")


# nouns after "first"/"last" that name no order among things ("the first name", "the last time",
# "a first cousin", "first aid")
_NOT_ORDERED = {"name", "names", "time", "times", "language", "languages", "step", "steps", "place", "half",
                "cousin", "cousins", "aid", "lady", "class",
                "quarter", "day", "days", "week", "weeks", "minute", "minutes", "of", "and", "or", "to", "in"}
_AUXILIARIES = {"is", "are", "was", "were", "did", "does", "do", "has", "have", "had", "can", "could", "will",
                "would", "of"}


def _possessive(word: str) -> bool:
    # a lone "s" is what is left of "X's" once the name X is blanked
    return word.endswith("'s") or word.endswith("s'") or word in ("s", "his", "her", "its", "their", "my", "your",
                                                                   "our")


def _asks_which_thing(words: tuple[str, ...]) -> bool:
    """"which film …", "what movie …": the question asks for one of several things, not
    for a place or a time ("where was X released first")."""
    return len(words) > 1 and words[0] in ("which", "what") and words[1][0].isalpha() \
        and words[1] not in _AUXILIARIES


def _is_comparative_use(question: str, words: tuple[str, ...], i: int) -> bool:
    """A comparative compares two options ("X or Y") or two terms ("X than Y")."""
    lowered = question.lower()
    if words[i] in _YES_NO_COMPARATIVES:
        # "was X born before Y": a yes/no comparison of dates; elsewhere a chain's word
        return words[0] in _BOOLEAN_OPENING or bool(_TAG_QUESTION.search(question))
    if " or " in lowered or _options_first(words) or _options_after(words, i):
        return True
    # "more than 100 million people" is a filter on a chain's values, not two things compared
    return " than " in lowered and not _THAN_A_NUMBER.search(lowered)


def _options_first(tokens: Sequence[str]) -> bool:
    """The question names its options before it asks: "between X and Y, who …", "of X, Y
    and Z, which …", "among X and Y …"."""
    return bool(tokens) and tokens[0] in ("between", "of", "among", "amongst") and "and" in tokens


# words after which a question lists the things it compares ("taller out of X and Y",
# "the older one between X and Y")
_LISTING = {"between", "of"}


def _options_after(tokens: Sequence[str], at: int | None) -> bool:
    """After the comparative or superlative at ``at``, the question lists its options:
    "who is taller out of X and Y", "which is older between X and Y". "All" makes it a
    class ("the fastest out of all the cars"), not options."""
    if at is None:
        return False
    for k in range(at + 1, len(tokens) - 1):
        opens = tokens[k] == "between" or (tokens[k] == "of" and tokens[k - 1] == "out")
        if opens:
            rest = tokens[k + 1:]
            clause = rest[:next((j for j, t in enumerate(rest) if t in ("?", ";", "!")), len(rest))]
            return "and" in clause and "all" not in clause[:2]
    return False


def attribute_phrase(words: tuple[str, ...], at: int) -> str:
    """The words naming what is compared: after the cue up to a function word ("the
    larger population, India or Nepal" → "population"), or, when none follow, the content
    words before it ("who was born first" → "born")."""
    after = []
    for w in words[at + 1:]:
        if w in _PHRASE_STOP or not w[0].isalpha():
            break
        if w not in _DETERMINERS:
            after.append(w)
    if after:
        return " ".join(after[:4])
    before = [w for w in words[:at] if w not in _PHRASE_STOP and w not in _DETERMINERS
              and w not in _BOOLEAN_OPENING and w[0].isalpha()]
    return " ".join(before[-3:])


__all__ = ["QuestionShape", "detect_shape", "without_names", "is_superlative", "listing_question", "without_superlative", "attribute_phrase", "COMPARATIVES", "SUPERLATIVES"]
