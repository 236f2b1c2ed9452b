"""English word forms the shape reader needs and a word list cannot enumerate. Pure functions.

* :func:`superlative_form`: an adjective's superlative by its ending ("the strongest",
  "the driest"), so a superlative that no list names is still read as one. Nouns that end
  in "-est" ("forest", "interest", "request") are not superlatives.
* :data:`IRREGULAR_PAST`: common irregular past tenses ("came", "won", "wrote"). After a
  wh-word they are verbs ("what came first"), not a class named by the question ("what
  river …"), and they do not end in "-ed" for the reader to see it.
* :func:`singulars`: the singular forms a plural may have ("comedies", "dramas").
"""
from __future__ import annotations

# nouns and verbs ending in "-est" (and "best"/"worst", which name awards more often than
# they order: "the best actor award")
_NOT_SUPERLATIVE = {
    "best", "worst", "west", "midwest", "northwest", "southwest", "rest", "test", "nest", "chest", "quest",
    "crest", "pest", "vest", "zest", "fest", "guest", "jest", "lest", "forest", "interest", "contest",
    "request", "protest", "harvest", "manifest", "conquest", "arrest", "inquest", "behest", "bequest",
    "priest", "honest", "modest", "earnest", "digest", "suggest", "invest", "attest", "detest", "infest",
    "divest", "ingest", "congest", "unrest", "everest", "budapest", "bucharest", "tempest", "palimpsest",
    "incest", "dishonest", "immodest",
}
# "-est" words shorter than this are not adjectives' superlatives ("test", "nest", "best")
_MIN_LENGTH = 6


def superlative_form(word: str) -> bool:
    """``word`` (lower case) reads as an adjective's superlative by its ending: "-est"
    after a stem of three letters or more ("strongest", "closest", "driest")."""
    return word.endswith("est") and len(word) >= _MIN_LENGTH and word.isalpha() and word not in _NOT_SUPERLATIVE


IRREGULAR_PAST = {
    "came", "went", "won", "wrote", "made", "took", "gave", "became", "began", "ran", "saw", "found", "left",
    "led", "held", "built", "bought", "brought", "sold", "told", "said", "thought", "fought", "taught", "caught",
    "met", "sang", "spoke", "stood", "grew", "knew", "drew", "flew", "threw", "fell", "rose", "wore", "bore",
    "swam", "sat", "lay", "ate", "drank", "got", "kept", "lost", "paid", "sent", "spent", "felt", "meant",
    "heard", "drove", "rode", "broke", "chose", "stole", "beat", "fled", "hid", "lent", "rang", "sank", "shook",
    "struck", "swore", "tore", "underwent", "withdrew", "overcame", "forgot", "forgave", "did", "had", "was",
    "were", "shot", "slew", "wed", "dealt", "arose", "awoke",
}


def singulars(word: str) -> list[str]:
    """The singular forms a plural word may have: "comedies" → comedy, "dramas" → drama,
    "churches" → church."""
    out = []
    if word.endswith("ies"):
        out.append(word[:-3] + "y")
    if word.endswith("es"):
        out.append(word[:-2])
    if word.endswith("s") and not word.endswith("ss"):
        out.append(word[:-1])
    return out


__all__ = ["superlative_form", "IRREGULAR_PAST", "singulars"]
