"""Writes data/sample-wikidata.json: a small, hand-written Wikidata JSON dump for the demo
and tests. Facts follow Wikidata as of 2024; the file uses the real dump framing ('[', one
entity per line with a trailing comma, ']'). Run: python data/make_sample.py"""
import json
from pathlib import Path

OUT = Path(__file__).with_name("sample-wikidata.json")

PROPS = {  # id: (label, description, datatype)
    "P31": ("instance of", "that class of which this subject is a particular example and member", "wikibase-item"),
    "P17": ("country", "sovereign state that this item is in", "wikibase-item"),
    "P30": ("continent", "continent of which the subject is a part", "wikibase-item"),
    "P36": ("capital", "seat of government of a country, province, state or other type of administrative territorial entity", "wikibase-item"),
    "P1376": ("capital of", "country, state, department, canton or other administrative division of which the municipality is the governmental seat", "wikibase-item"),
    "P4552": ("mountain range", "range or subrange to which the geographical item belongs", "wikibase-item"),
    "P2044": ("elevation above sea level", "height of the item (geographical object) as measured relative to sea level", "quantity"),
    "P1082": ("population", "number of people inhabiting the place", "quantity"),
    "P585": ("point in time", "date something took place, existed or a statement was true", "time"),
    "P19": ("place of birth", "most specific known birth location of a person", "wikibase-item"),
    "P20": ("place of death", "most specific known (e.g. city instead of country) death location of a person", "wikibase-item"),
    "P27": ("country of citizenship", "the object is a country that recognizes the subject as its citizen", "wikibase-item"),
    "P69": ("educated at", "educational institution attended by subject", "wikibase-item"),
    "P106": ("occupation", "occupation of a person", "wikibase-item"),
    "P21": ("sex or gender", "sex or gender identity of human or animal", "wikibase-item"),
    "P569": ("date of birth", "date on which the subject was born", "time"),
    "P570": ("date of death", "date on which the subject died", "time"),
    "P47": ("shares border with", "countries or administrative subdivisions, of equal level, that this item borders", "wikibase-item"),
    "P625": ("coordinate location", "geocoordinates of the subject", "globe-coordinate"),
    "P856": ("official website", "URL of the official page of an item", "url"),
    "P1449": ("nickname", "informal name", "monolingualtext"),
}

ITEMS = {  # id: (label, description, aliases, claims, extra labels)
    "Q5": ("human", "any member of Homo sapiens", ["person", "people"], {"P31": []}, {}),
    "Q6256": ("country", "distinct territorial body or political entity", ["nation"], {}, {}),
    "Q46831": ("mountain range", "geographic area containing several geologically related mountains", [], {}, {}),
    "Q8502": ("mountain", "large natural elevation of the earth's surface", [], {}, {}),
    "Q515": ("city", "large permanent human settlement", [], {}, {}),
    "Q5119": ("capital city", "primary city of a country, state, province, or other administrative division", ["capital"], {}, {}),
    "Q5107": ("continent", "large landmass identified by convention", [], {}, {}),
    "Q18": ("South America", "continent in the Western Hemisphere", [], {"P31": ["Q5107"]}, {"de": "Südamerika"}),
    "Q48": ("Asia", "continent on Earth, mainly on the Northern and Eastern Hemispheres", [], {"P31": ["Q5107"]}, {"de": "Asien"}),
    "Q46": ("Europe", "continent on Earth, mainly on the Northern and Eastern Hemispheres", [], {"P31": ["Q5107"]}, {"de": "Europa"}),
    "Q5456": ("Andes", "mountain range in South America", ["Andes Mountains", "Andean mountain range", "Cordillera de los Andes"],
              {"P31": ["Q46831"], "P30": ["Q18"], "P17": ["Q414", "Q750", "Q298", "Q739", "Q736", "Q419", "Q717"]}, {"de": "Anden", "es": "Cordillera de los Andes"}),
    "Q5451": ("Himalayas", "mountain range in Asia", ["Himalaya", "Himalayan mountains"],
              {"P31": ["Q46831"], "P30": ["Q48"], "P17": ["Q917", "Q148", "Q668", "Q837", "Q843"]}, {"de": "Himalaya"}),
    "Q513": ("Mount Everest", "Earth's highest mountain above sea level", ["Everest", "Sagarmatha", "Chomolungma"],
             {"P31": ["Q8502"], "P4552": ["Q5451"], "P17": ["Q837", "Q148"], "P30": ["Q48"],
              "P2044": [("quantity", "+8848.86", "Q11573")], "P625": [("coord", 27.988056, 86.925278)]}, {}),
    "Q414": ("Argentina", "country in South America", ["Argentine Republic"], {"P31": ["Q6256"], "P30": ["Q18"], "P36": ["Q1486"], "P47": ["Q298", "Q750"]}, {}),
    "Q750": ("Bolivia", "country in South America", ["Plurinational State of Bolivia"], {"P31": ["Q6256"], "P30": ["Q18"], "P36": ["Q2907"], "P47": ["Q414", "Q298", "Q419"]}, {}),
    "Q298": ("Chile", "country in South America", ["Republic of Chile"], {"P31": ["Q6256"], "P30": ["Q18"], "P36": ["Q2887"], "P47": ["Q414", "Q750", "Q419"]}, {}),
    "Q739": ("Colombia", "country in South America", ["Republic of Colombia"], {"P31": ["Q6256"], "P30": ["Q18"], "P36": ["Q2841"], "P47": ["Q717", "Q736", "Q419"]}, {}),
    "Q736": ("Ecuador", "country in South America", ["Republic of Ecuador"], {"P31": ["Q6256"], "P30": ["Q18"], "P36": ["Q2900"], "P47": ["Q739", "Q419"]}, {}),
    "Q419": ("Peru", "country in South America", ["Republic of Peru"], {"P31": ["Q6256"], "P30": ["Q18"], "P36": ["Q2868"], "P47": ["Q736", "Q739", "Q750", "Q298"]}, {}),
    "Q717": ("Venezuela", "country in northern South America", ["Bolivarian Republic of Venezuela"], {"P31": ["Q6256"], "P30": ["Q18"], "P36": ["Q1533"], "P47": ["Q739"]}, {}),
    "Q917": ("Bhutan", "landlocked country in South Asia", ["Kingdom of Bhutan"], {"P31": ["Q6256"], "P30": ["Q48"], "P36": ["Q9270"], "P47": ["Q148", "Q668"]}, {}),
    "Q148": ("People's Republic of China", "country in East Asia", ["China", "PRC"], {"P31": ["Q6256"], "P30": ["Q48"], "P36": ["Q956"], "P47": ["Q837", "Q668", "Q843", "Q917"]}, {}),
    "Q668": ("India", "country in South Asia", ["Republic of India", "Bharat"],
             {"P31": ["Q6256"], "P30": ["Q48"], "P36": ["Q987"], "P47": ["Q837", "Q148", "Q843", "Q917"],
              "P1082": [("population", "+1210854977", "2011-00-00")]}, {}),
    "Q837": ("Nepal", "landlocked country in South Asia", ["Federal Democratic Republic of Nepal"],
             {"P31": ["Q6256"], "P30": ["Q48"], "P36": ["Q3037"], "P47": ["Q148", "Q668"],
              "P1082": [("population", "+26494504", "2011-00-00"), ("population", "+29164578", "2021-00-00", "preferred")]}, {}),
    "Q843": ("Pakistan", "country in South Asia", ["Islamic Republic of Pakistan"], {"P31": ["Q6256"], "P30": ["Q48"], "P36": ["Q1362"], "P47": ["Q668", "Q148"]}, {}),
    "Q145": ("United Kingdom", "country in north-west Europe", ["UK", "Britain", "Great Britain"], {"P31": ["Q6256"], "P30": ["Q46"], "P36": ["Q84"]}, {}),
    "Q1486": ("Buenos Aires", "capital and largest city of Argentina", [], {"P31": ["Q515", "Q5119"], "P17": ["Q414"], "P1376": ["Q414"]}, {}),
    "Q2907": ("Sucre", "constitutional capital of Bolivia", [], {"P31": ["Q515", "Q5119"], "P17": ["Q750"], "P1376": ["Q750"]}, {}),
    "Q2887": ("Santiago", "capital city of Chile", ["Santiago de Chile"], {"P31": ["Q515", "Q5119"], "P17": ["Q298"], "P1376": ["Q298"]}, {}),
    "Q2841": ("Bogotá", "capital city of Colombia", ["Bogota"], {"P31": ["Q515", "Q5119"], "P17": ["Q739"], "P1376": ["Q739"]}, {}),
    "Q2900": ("Quito", "capital city of Ecuador", [], {"P31": ["Q515", "Q5119"], "P17": ["Q736"], "P1376": ["Q736"]}, {}),
    "Q2868": ("Lima", "capital city of Peru", [], {"P31": ["Q515", "Q5119"], "P17": ["Q419"], "P1376": ["Q419"]}, {}),
    "Q1533": ("Caracas", "capital city of Venezuela", [], {"P31": ["Q515", "Q5119"], "P17": ["Q717"], "P1376": ["Q717"]}, {}),
    "Q9270": ("Thimphu", "capital city of Bhutan", [], {"P31": ["Q515", "Q5119"], "P17": ["Q917"], "P1376": ["Q917"]}, {}),
    "Q956": ("Beijing", "capital city of the People's Republic of China", ["Peking"], {"P31": ["Q515", "Q5119"], "P17": ["Q148"], "P1376": ["Q148"]}, {}),
    "Q987": ("New Delhi", "capital city of India", [], {"P31": ["Q515", "Q5119"], "P17": ["Q668"], "P1376": ["Q668"]}, {}),
    "Q3037": ("Kathmandu", "capital city of Nepal", ["Kantipur"], {"P31": ["Q515", "Q5119"], "P17": ["Q837"], "P1376": ["Q837"]}, {}),
    "Q1362": ("Islamabad", "capital city of Pakistan", [], {"P31": ["Q515", "Q5119"], "P17": ["Q843"], "P1376": ["Q843"]}, {}),
    "Q84": ("London", "capital and largest city of the United Kingdom", ["London, UK"], {"P31": ["Q515", "Q5119"], "P17": ["Q145"], "P1376": ["Q145"]}, {}),
    "Q350": ("Cambridge", "city in Cambridgeshire, England", [], {"P31": ["Q515"], "P17": ["Q145"]}, {}),
    "Q159288": ("Santa Barbara", "city in and county seat of Santa Barbara County, California, United States", [], {"P31": ["Q515"]}, {}),
    "Q691283": ("St John's College", "constituent college of the University of Cambridge", ["St John's College, Cambridge"], {"P17": ["Q145"]}, {}),
    "Q4961791": ("Brentwood School", "public school in Brentwood, Essex, England", [], {"P17": ["Q145"]}, {}),
    "Q36180": ("writer", "person who uses written words to communicate ideas", ["author"], {}, {}),
    "Q28389": ("screenwriter", "writer who writes for films, TV, games", ["scriptwriter"], {}, {}),
    "Q6581097": ("male", "to be used in \"sex or gender\" (P21) to indicate that the human subject is a male", [], {}, {}),
    "Q11573": ("metre", "SI unit of length", ["meter", "m"], {}, {}),
    "Q42": ("Douglas Adams", "English writer and humorist (1952–2001)", ["Douglas Noel Adams", "Douglas Noël Adams", "DNA"],
            {"P31": ["Q5"], "P21": ["Q6581097"], "P27": ["Q145"], "P19": ["Q350"], "P20": ["Q159288"],
             "P69": ["Q691283", "Q4961791"], "P106": ["Q36180", "Q28389"],
             "P569": [("time", "+1952-03-11T00:00:00Z", 11)], "P570": [("time", "+2001-05-11T00:00:00Z", 11)],
             "P856": [("url", "http://douglasadams.com/")]}, {"de": "Douglas Adams", "fr": "Douglas Adams"}),
}


def _snak(pid: str, value) -> dict:
    if isinstance(value, str):
        return {"snaktype": "value", "property": pid, "datatype": "wikibase-item", "datavalue": {
            "type": "wikibase-entityid", "value": {"entity-type": "item", "numeric-id": int(value[1:]), "id": value}}}
    kind = value[0]
    if kind == "time":
        return {"snaktype": "value", "property": pid, "datatype": "time", "datavalue": {"type": "time", "value": {
            "time": value[1], "timezone": 0, "before": 0, "after": 0, "precision": value[2],
            "calendarmodel": "http://www.wikidata.org/entity/Q1985727"}}}
    if kind == "quantity":
        return {"snaktype": "value", "property": pid, "datatype": "quantity", "datavalue": {"type": "quantity", "value": {
            "amount": value[1], "unit": f"http://www.wikidata.org/entity/{value[2]}"}}}
    if kind == "coord":
        return {"snaktype": "value", "property": pid, "datatype": "globe-coordinate", "datavalue": {"type": "globecoordinate", "value": {
            "latitude": value[1], "longitude": value[2], "altitude": None, "precision": 0.000277778,
            "globe": "http://www.wikidata.org/entity/Q2"}}}
    if kind == "url":
        return {"snaktype": "value", "property": pid, "datatype": "url", "datavalue": {"type": "string", "value": value[1]}}
    raise ValueError(kind)


def _claims(item_id: str, claims: dict) -> dict:
    out = {}
    for pid, values in claims.items():
        stmts = []
        for n, value in enumerate(values, 1):
            rank = "normal"
            qualifiers = {}
            if isinstance(value, tuple) and value[0] == "population":
                rank = value[3] if len(value) > 3 else "normal"
                qualifiers = {"P585": [_snak("P585", ("time", f"+{value[2][:4]}-00-00T00:00:00Z", 9))]}
                value = ("quantity", value[1], "Q199")
                stmt_snak = _snak(pid, value)
                stmt_snak["datavalue"]["value"]["unit"] = "1"
            else:
                stmt_snak = _snak(pid, value)
            stmt = {"mainsnak": stmt_snak, "type": "statement", "id": f"{item_id}$kgstore-sample-{pid}-{n}", "rank": rank}
            if qualifiers:
                stmt["qualifiers"] = qualifiers
                stmt["qualifiers-order"] = list(qualifiers)
            stmts.append(stmt)
        out[pid] = stmts
    return out


def main() -> None:
    lines = []
    for pid, (label, desc, datatype) in PROPS.items():
        lines.append({"type": "property", "id": pid, "datatype": datatype,
                      "labels": {"en": {"language": "en", "value": label}},
                      "descriptions": {"en": {"language": "en", "value": desc}}, "aliases": {}, "claims": {}})
    for qid, (label, desc, aliases, claims, extra) in ITEMS.items():
        labels = {"en": {"language": "en", "value": label}}
        labels.update({lang: {"language": lang, "value": v} for lang, v in extra.items()})
        lines.append({"type": "item", "id": qid, "labels": labels,
                      "descriptions": {"en": {"language": "en", "value": desc}},
                      "aliases": {"en": [{"language": "en", "value": a} for a in aliases]} if aliases else {},
                      "claims": _claims(qid, {k: v for k, v in claims.items() if v}),
                      "sitelinks": {}})
    body = ",\n".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in lines)
    OUT.write_text("[\n" + body + "\n]\n", encoding="utf-8")
    print(f"wrote {len(lines)} entities to {OUT}")


if __name__ == "__main__":
    main()
