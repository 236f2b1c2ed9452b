"""Writes two small, hand-written Wikidata JSON dumps. Facts follow Wikidata as of 2024;
the files use the real dump framing ('[', one entity per line with a trailing comma, ']').
Run: python data/make_sample.py

* data/sample-wikidata.json: the demo and test store (mountains, countries, Douglas Adams).
* data/sample-wikidata-values.json: the demo's entities plus people with dates of birth and
  death (day precision, a few at year precision), mountains with elevations and countries
  with areas (quantities with units), and qualified statements: census populations at a
  point in time, spouses and sports teams with start and end times, awards with a point in
  time. Dev sets of value questions are written from it by bench/shape_sets.py --kb wikidata
  (ingest it with --statements full). Where Wikidata holds several values (remeasured
  heights, areas by source) the sample holds one commonly cited value; Karlsruhe's
  populations and Douglas Adams's marriage are as in Wikidata-Toolkit's wbgetentities
  fixtures (../shared/data/formats/wikidata_json/api_format).
"""
import json
from pathlib import Path

OUT = Path(__file__).with_name("sample-wikidata.json")
VALUES_OUT = Path(__file__).with_name("sample-wikidata-values.json")

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


GREGORIAN, JULIAN = "Q1985727", "Q1985786"  # calendar models

# -- the values sample (sample-wikidata-values.json) -----------------------------------------


def day(date: str, calendar: str = GREGORIAN) -> tuple:
    """A time at day precision: day("1952-03-11")."""
    return ("time", f"+{date}T00:00:00Z", 11, calendar)


def year(y: int, calendar: str = GREGORIAN) -> tuple:
    """A time at year precision, written as the dumps write it: +1265-00-00T00:00:00Z."""
    return ("time", f"+{y:04d}-00-00T00:00:00Z", 9, calendar)


def metres(amount: str) -> tuple:
    return ("quantity", f"+{amount}", "Q11573")


def km2(amount: str) -> tuple:
    return ("quantity", f"+{amount}", "Q712226")


def census(*counts: tuple[int, int]) -> list:
    """Populations, each qualified by its year (point in time, year precision)."""
    return [("population", f"+{n}", f"{y}-00-00") for y, n in counts]


def married(spouse: str, start: str, end: str | None = None) -> tuple:
    """A spouse with start time (and end time), both at day precision."""
    qualifiers = {"P580": [day(start)]}
    if end:
        qualifiers["P582"] = [day(end)]
    return ("qualified", spouse, qualifiers)


def played(team: str, start: int, end: int | None = None) -> tuple:
    """A sports team with start time (and end time), both at year precision."""
    qualifiers = {"P580": [year(start)]}
    if end:
        qualifiers["P582"] = [year(end)]
    return ("qualified", team, qualifiers)


def awarded(award: str, when: int) -> tuple:
    return ("qualified", award, {"P585": [year(when)]})


VALUE_PROPS = {**PROPS,
    "P2046": ("area", "area occupied by an object", "quantity"),
    "P26": ("spouse", "the subject has the object as their spouse (husband, wife, partner, etc.)", "wikibase-item"),
    "P580": ("start time", "time an entity begins to exist or a statement starts being valid", "time"),
    "P582": ("end time", "moment when an entity ceases to exist or a statement stops being valid", "time"),
    "P54": ("member of sports team", "sports teams or clubs that the subject represents or represented", "wikibase-item"),
    "P166": ("award received", "award or recognition received by a person, organization or creative work", "wikibase-item"),
}

# Claims added to the demo's items (their demo claims come first, unchanged).
VALUE_CLAIMS = {
    "Q42": {"P26": [married("Q14623681", "1991-11-25", "2001-05-11")]},
    "Q668": {"P1082": census((2001, 1028737436)), "P2046": [km2("3287263")]},
    "Q148": {"P1082": census((2010, 1339724852), (2020, 1411778724)), "P2046": [km2("9596961")]},
    "Q843": {"P1082": census((2017, 207774520), (2023, 241499431))},
    "Q917": {"P1082": census((2005, 634982), (2017, 727145)), "P2046": [km2("38394")]},
    "Q837": {"P2046": [km2("147516")]},
    "Q414": {"P1082": census((2001, 36260130), (2010, 40117096)), "P2046": [km2("2780400")]},
    "Q298": {"P1082": census((2002, 15116435), (2017, 17574003)), "P2046": [km2("756102")]},
    "Q750": {"P1082": census((2001, 8274325), (2012, 10059856)), "P2046": [km2("1098581")]},
    "Q419": {"P2046": [km2("1285216")]},
    "Q739": {"P2046": [km2("1141748")]},
    "Q736": {"P2046": [km2("283561")]},
    "Q717": {"P2046": [km2("916445")]},
    "Q145": {"P2046": [km2("242495")]},
}

_M, _F = "Q6581097", "Q6581072"  # male, female
_PHYSICIST, _CHEMIST, _COMPOSER, _PAINTER, _POLITICIAN = "Q169470", "Q593644", "Q36834", "Q1028181", "Q82955"
_SINGER, _ACTOR, _MATHEMATICIAN, _FOOTBALLER, _PHILOSOPHER = "Q177220", "Q33999", "Q170790", "Q937857", "Q4964182"
_WRITER, _POET = "Q36180", "Q49757"
_PHYSICS, _CHEMISTRY, _PEACE, _LITERATURE = "Q38104", "Q44585", "Q35637", "Q37922"  # Nobel Prizes
_BARCELONA, _PSG, _MAN_UTD, _REAL_MADRID, _JUVENTUS, _SPORTING = "Q7156", "Q483020", "Q18656", "Q8682", "Q1422", "Q75729"


def person(label, desc, sex, born=None, died=None, *, aliases=(), citizen=(), jobs=(), **more) -> tuple:
    """An ITEMS entry for a human: born/died are day(...) or year(...) values."""
    claims = {"P31": ["Q5"], "P21": [sex], "P27": list(citizen), "P106": list(jobs)}
    if born:
        claims["P569"] = [born]
    if died:
        claims["P570"] = [died]
    claims.update(more)
    return (label, desc, list(aliases), claims, {})


def country(label, desc, aliases, continents, *, population=(), area=None) -> tuple:
    claims = {"P31": ["Q6256"], "P30": list(continents), "P1082": census(*population)}
    if area:
        claims["P2046"] = [km2(area)]
    return (label, desc, list(aliases), claims, {})


def mountain(label, desc, aliases, countries, continent, elevation, *, mountain_range=None) -> tuple:
    claims = {"P31": ["Q8502"], "P17": list(countries), "P30": [continent], "P2044": [metres(elevation)]}
    if mountain_range:
        claims["P4552"] = [mountain_range]
    return (label, desc, list(aliases), claims, {})


VALUE_ITEMS = {  # id: (label, description, aliases, claims, extra labels), as ITEMS
    # classes, units, calendars, continents
    "Q6581072": ("female", "to be used in \"sex or gender\" (P21) to indicate that the human subject is a female", [], {}, {}),
    "Q712226": ("square kilometre", "unit of area", ["km²", "square kilometer"], {}, {}),
    "Q1985727": ("proleptic Gregorian calendar", "extension of the Gregorian calendar to dates before its introduction", [], {}, {}),
    "Q1985786": ("proleptic Julian calendar", "extension of the Julian calendar to dates before its introduction", [], {}, {}),
    "Q49": ("North America", "continent on the Northern and Western Hemispheres", [], {"P31": ["Q5107"]}, {}),
    "Q15": ("Africa", "continent on the Northern and Southern Hemispheres", [], {"P31": ["Q5107"]}, {}),
    # occupations
    "Q169470": ("physicist", "scientist who does research in physics", [], {}, {}),
    "Q593644": ("chemist", "scientist trained in the study of chemistry", [], {}, {}),
    "Q36834": ("composer", "person who creates music", [], {}, {}),
    "Q1028181": ("painter", "person who creates paintings", [], {}, {}),
    "Q82955": ("politician", "person involved in politics", [], {}, {}),
    "Q177220": ("singer", "person who sings", [], {}, {}),
    "Q33999": ("actor", "person who acts in a dramatic or comic production", [], {}, {}),
    "Q170790": ("mathematician", "person with an extensive knowledge of mathematics", [], {}, {}),
    "Q937857": ("association football player", "sportsperson who plays association football", ["footballer", "soccer player"], {}, {}),
    "Q4964182": ("philosopher", "person with an extensive knowledge of philosophy", [], {}, {}),
    "Q49757": ("poet", "person who writes and publishes poetry", [], {}, {}),
    # awards
    _PHYSICS: ("Nobel Prize in Physics", "one of the five Nobel Prizes established in 1895 by Alfred Nobel", [], {}, {}),
    _CHEMISTRY: ("Nobel Prize in Chemistry", "one of the five Nobel Prizes established in 1895 by Alfred Nobel", [], {}, {}),
    _PEACE: ("Nobel Peace Prize", "one of the five Nobel Prizes established in 1895 by Alfred Nobel", [], {}, {}),
    _LITERATURE: ("Nobel Prize in Literature", "one of the five Nobel Prizes established in 1895 by Alfred Nobel", [], {}, {}),
    # sports teams
    _BARCELONA: ("FC Barcelona", "association football club in Barcelona, Spain", ["Barça"], {"P17": ["Q29"]}, {}),
    _PSG: ("Paris Saint-Germain F.C.", "association football club in Paris, France", ["PSG", "Paris Saint-Germain"], {"P17": ["Q142"]}, {}),
    _MAN_UTD: ("Manchester United F.C.", "association football club in Manchester, England", ["Manchester United"], {"P17": ["Q145"]}, {}),
    _REAL_MADRID: ("Real Madrid CF", "association football club in Madrid, Spain", ["Real Madrid"], {"P17": ["Q29"]}, {}),
    _JUVENTUS: ("Juventus FC", "association football club in Turin, Italy", ["Juventus"], {"P17": ["Q38"]}, {}),
    _SPORTING: ("Sporting CP", "sports club in Lisbon, Portugal", ["Sporting Lisbon"], {"P17": ["Q45"]}, {}),
    # countries (census populations and areas)
    "Q30": country("United States of America", "country primarily located in North America", ["USA", "United States", "US"], ["Q49"],
                   population=[(2000, 281421906), (2010, 308745538), (2020, 331449281)], area="9833520"),
    "Q16": country("Canada", "country in North America", [], ["Q49"],
                   population=[(2011, 33476688), (2016, 35151728), (2021, 36991981)], area="9984670"),
    "Q96": country("Mexico", "country in North America", ["United Mexican States"], ["Q49"],
                   population=[(2010, 112336538), (2020, 126014024)], area="1964375"),
    "Q155": country("Brazil", "country in South America", ["Federative Republic of Brazil"], ["Q18"],
                    population=[(2000, 169799170), (2010, 190755799)], area="8515767"),
    "Q183": country("Germany", "country in Central Europe", ["Federal Republic of Germany"], ["Q46"],
                    population=[(2011, 80219695)], area="357588"),
    "Q142": country("France", "country in Western Europe", ["French Republic"], ["Q46"]),
    "Q38": country("Italy", "country in Southern Europe", ["Italian Republic"], ["Q46"],
                   population=[(2001, 56995744), (2011, 59433744)], area="301340"),
    "Q29": country("Spain", "country in southwestern Europe", ["Kingdom of Spain"], ["Q46"], area="505990"),
    "Q45": country("Portugal", "country in southwestern Europe", ["Portuguese Republic"], ["Q46"]),
    "Q39": country("Switzerland", "country in Central Europe", ["Swiss Confederation"], ["Q46"], area="41285"),
    "Q40": country("Austria", "country in Central Europe", ["Republic of Austria"], ["Q46"], area="83879"),
    "Q27": country("Ireland", "country in north-western Europe", ["Republic of Ireland"], ["Q46"],
                   population=[(2011, 4588252), (2016, 4761865), (2022, 5149139)], area="70273"),
    "Q159": country("Russia", "country in Eastern Europe and Northern Asia", ["Russian Federation"], ["Q46", "Q48"],
                    population=[(2002, 145166731), (2010, 142856536)], area="17098246"),
    "Q17": country("Japan", "island country in East Asia", [], ["Q48"],
                   population=[(2010, 128057352), (2015, 127094745), (2020, 126146099)], area="377975"),
    "Q252": country("Indonesia", "country in Southeast Asia and Oceania", ["Republic of Indonesia"], ["Q48"],
                    population=[(2010, 237641326), (2020, 270203917)], area="1904569"),
    "Q928": country("Philippines", "country in Southeast Asia", ["Republic of the Philippines"], ["Q48"],
                    population=[(2015, 100981437), (2020, 109035343)]),
    "Q881": country("Vietnam", "country in Southeast Asia", ["Socialist Republic of Vietnam"], ["Q48"],
                    population=[(2009, 85846997), (2019, 96208984)]),
    "Q408": country("Australia", "country in Oceania", ["Commonwealth of Australia"], [],
                    population=[(2016, 23401892), (2021, 25422788)], area="7692024"),
    "Q664": country("New Zealand", "island country in Oceania", [], [],
                    population=[(2013, 4242048), (2018, 4699755)], area="268021"),
    "Q258": country("South Africa", "country in southern Africa", ["Republic of South Africa"], ["Q15"],
                    population=[(2011, 51770560), (2022, 62027503)], area="1221037"),
    "Q1033": country("Nigeria", "country in West Africa", ["Federal Republic of Nigeria"], ["Q15"],
                     population=[(1991, 88992220), (2006, 140431790)], area="923768"),
    "Q114": country("Kenya", "country in East Africa", ["Republic of Kenya"], ["Q15"],
                    population=[(2009, 38610097), (2019, 47564296)], area="580367"),
    "Q924": country("Tanzania", "country in East Africa", ["United Republic of Tanzania"], ["Q15"], area="947303"),
    # a city whose populations are dated to the day (as in the Wikidata-Toolkit fixture)
    "Q1040": ("Karlsruhe", "city in Baden-Württemberg, Germany", [],
              {"P31": ["Q515"], "P17": ["Q183"], "P2046": [km2("173.46")],
               "P1082": [("qualified", ("quantity", f"+{n}", "1"), {"P585": [day(d)]})
                         for d, n in (("2010-12-31", 294761), ("2011-12-31", 300711), ("2012-12-31", 296033),
                                      ("2013-12-31", 299103))]}, {}),
    # mountains (elevations in metres)
    "Q43512": mountain("K2", "second-highest mountain on Earth, on the China–Pakistan border", ["Mount Godwin-Austen"],
                       ["Q843", "Q148"], "Q48", "8611"),
    "Q168702": mountain("Lhotse", "mountain in the Himalayas", [], ["Q837", "Q148"], "Q48", "8516", mountain_range="Q5451"),
    "Q169986": mountain("Makalu", "mountain in the Himalayas", [], ["Q837", "Q148"], "Q48", "8485", mountain_range="Q5451"),
    "Q170089": mountain("Cho Oyu", "mountain in the Himalayas", [], ["Q837", "Q148"], "Q48", "8188", mountain_range="Q5451"),
    "Q170070": mountain("Manaslu", "mountain in the Himalayas of Nepal", [], ["Q837"], "Q48", "8163", mountain_range="Q5451"),
    "Q130736": mountain("Nanga Parbat", "mountain in the Himalayas of Pakistan", [], ["Q843"], "Q48", "8126", mountain_range="Q5451"),
    "Q7296": mountain("Mount Kilimanjaro", "dormant volcano in Tanzania, the highest mountain in Africa", ["Kilimanjaro"],
                      ["Q924"], "Q15", "5895"),
    "Q130018": mountain("Denali", "highest mountain in North America, in Alaska", ["Mount McKinley"], ["Q30"], "Q49", "6190"),
    "Q583": mountain("Mont Blanc", "highest mountain in the Alps", ["Monte Bianco"], ["Q142", "Q38"], "Q46", "4805.59"),
    "Q1374": mountain("Matterhorn", "mountain in the Alps on the border of Switzerland and Italy", ["Monte Cervino"],
                      ["Q39", "Q38"], "Q46", "4478"),
    "Q3375": mountain("Zugspitze", "highest mountain in Germany", [], ["Q183", "Q40"], "Q46", "2962"),
    "Q39231": mountain("Mount Fuji", "highest mountain in Japan", ["Fujisan", "Fuji"], ["Q17"], "Q48", "3776.24"),
    # people
    "Q14623681": person("Jane Belson", "English barrister, wife of Douglas Adams", _F,
                        citizen=["Q145"], P26=[married("Q42", "1991-11-25", "2001-05-11")]),
    "Q937": person("Albert Einstein", "German-born theoretical physicist (1879–1955)", _M, day("1879-03-14"), day("1955-04-18"),
                   aliases=["Einstein"], jobs=[_PHYSICIST], P166=[awarded(_PHYSICS, 1921)]),
    "Q1035": person("Charles Darwin", "English naturalist and biologist (1809–1882)", _M, day("1809-02-12"), day("1882-04-19"),
                    aliases=["Charles Robert Darwin"]),
    "Q7186": person("Marie Curie", "Polish-French physicist and chemist (1867–1934)", _F, day("1867-11-07"), day("1934-07-04"),
                    aliases=["Maria Skłodowska-Curie"], jobs=[_PHYSICIST, _CHEMIST],
                    P26=[married("Q37463", "1895-07-26", "1906-04-19")],
                    P166=[awarded(_PHYSICS, 1903), awarded(_CHEMISTRY, 1911)]),
    "Q37463": person("Pierre Curie", "French physicist (1859–1906)", _M, day("1859-05-15"), day("1906-04-19"),
                     citizen=["Q142"], jobs=[_PHYSICIST], P26=[married("Q7186", "1895-07-26", "1906-04-19")],
                     P166=[awarded(_PHYSICS, 1903)]),
    "Q254": person("Wolfgang Amadeus Mozart", "Austrian composer of the Classical period (1756–1791)", _M,
                   day("1756-01-27"), day("1791-12-05"), aliases=["Mozart"], jobs=[_COMPOSER]),
    "Q5582": person("Vincent van Gogh", "Dutch painter (1853–1890)", _M, day("1853-03-30"), day("1890-07-29"),
                    aliases=["van Gogh"], jobs=[_PAINTER]),
    "Q5593": person("Pablo Picasso", "Spanish painter and sculptor (1881–1973)", _M, day("1881-10-25"), day("1973-04-08"),
                    aliases=["Picasso"], citizen=["Q29"], jobs=[_PAINTER]),
    "Q9682": person("Elizabeth II", "Queen of the United Kingdom from 1952 to 2022", _F, day("1926-04-21"), day("2022-09-08"),
                    aliases=["Queen Elizabeth II"], citizen=["Q145"], P26=[married("Q80976", "1947-11-20", "2021-04-09")]),
    "Q80976": person("Prince Philip, Duke of Edinburgh", "consort of Queen Elizabeth II (1921–2021)", _M,
                     day("1921-06-10"), day("2021-04-09"), aliases=["Prince Philip"], citizen=["Q145"],
                     P26=[married("Q9682", "1947-11-20", "2021-04-09")]),
    "Q43274": person("Charles III", "King of the United Kingdom since 2022", _M, day("1948-11-14"),
                     aliases=["King Charles III", "Prince Charles"], citizen=["Q145"],
                     P26=[married("Q9685", "1981-07-29", "1996-08-28")]),
    "Q9685": person("Diana, Princess of Wales", "member of the British royal family (1961–1997)", _F,
                    day("1961-07-01"), day("1997-08-31"), aliases=["Princess Diana", "Lady Diana Spencer"], citizen=["Q145"],
                    P26=[married("Q43274", "1981-07-29", "1996-08-28")]),
    "Q8023": person("Nelson Mandela", "President of South Africa from 1994 to 1999", _M, day("1918-07-18"), day("2013-12-05"),
                    citizen=["Q258"], jobs=[_POLITICIAN], P166=[awarded(_PEACE, 1993)]),
    "Q1001": person("Mahatma Gandhi", "Indian independence activist (1869–1948)", _M, day("1869-10-02"), day("1948-01-30"),
                    aliases=["Gandhi", "Mohandas Karamchand Gandhi"], jobs=[_POLITICIAN]),
    "Q76": person("Barack Obama", "president of the United States from 2009 to 2017", _M, day("1961-08-04"),
                  aliases=["Obama"], citizen=["Q30"], jobs=[_POLITICIAN], P26=[married("Q13133", "1992-10-03")],
                  P166=[awarded(_PEACE, 2009)]),
    "Q13133": person("Michelle Obama", "lawyer and writer, first lady of the United States from 2009 to 2017", _F,
                     day("1964-01-17"), citizen=["Q30"], P26=[married("Q76", "1992-10-03")]),
    "Q91": person("Abraham Lincoln", "president of the United States from 1861 to 1865", _M, day("1809-02-12"), day("1865-04-15"),
                  aliases=["Lincoln"], citizen=["Q30"], jobs=[_POLITICIAN]),
    "Q1203": person("John Lennon", "English singer-songwriter, member of the Beatles (1940–1980)", _M,
                    day("1940-10-09"), day("1980-12-08"), citizen=["Q145"], jobs=[_SINGER],
                    P26=[married("Q117012", "1969-03-20", "1980-12-08")]),
    "Q117012": person("Yoko Ono", "Japanese multimedia artist and singer", _F, day("1933-02-18"), citizen=["Q17"],
                      jobs=[_SINGER], P26=[married("Q1203", "1969-03-20", "1980-12-08")]),
    "Q2831": person("Michael Jackson", "American singer and dancer (1958–2009)", _M, day("1958-08-29"), day("2009-06-25"),
                    citizen=["Q30"], jobs=[_SINGER]),
    "Q303": person("Elvis Presley", "American singer and actor (1935–1977)", _M, day("1935-01-08"), day("1977-08-16"),
                   aliases=["Elvis"], citizen=["Q30"], jobs=[_SINGER, _ACTOR]),
    "Q34660": person("J. K. Rowling", "British author of the Harry Potter books", _F, day("1965-07-31"),
                     aliases=["Joanne Rowling", "JK Rowling"], citizen=["Q145"], jobs=[_WRITER]),
    "Q17714": person("Stephen Hawking", "British theoretical physicist (1942–2018)", _M, day("1942-01-08"), day("2018-03-14"),
                     citizen=["Q145"], jobs=[_PHYSICIST]),
    "Q7251": person("Alan Turing", "English mathematician and computer scientist (1912–1954)", _M,
                    day("1912-06-23"), day("1954-06-07"), citizen=["Q145"], jobs=[_MATHEMATICIAN]),
    "Q615": person("Lionel Messi", "Argentine association football player", _M, day("1987-06-24"),
                   aliases=["Messi", "Leo Messi"], citizen=["Q414"], jobs=[_FOOTBALLER],
                   P54=[played(_BARCELONA, 2004, 2021), played(_PSG, 2021, 2023)]),
    "Q11571": person("Cristiano Ronaldo", "Portuguese association football player", _M, day("1985-02-05"),
                     aliases=["CR7"], citizen=["Q45"], jobs=[_FOOTBALLER],
                     P54=[played(_SPORTING, 2002, 2003), played(_MAN_UTD, 2003, 2009), played(_REAL_MADRID, 2009, 2018),
                          played(_JUVENTUS, 2018, 2021), played(_MAN_UTD, 2021, 2022)]),
    "Q1835": person("Zinedine Zidane", "French association football player and manager", _M, day("1972-06-23"),
                    aliases=["Zidane", "Zizou"], citizen=["Q142"], jobs=[_FOOTBALLER],
                    P54=[played(_JUVENTUS, 1996, 2001), played(_REAL_MADRID, 2001, 2006)]),
    "Q10520": person("David Beckham", "English association football player", _M, day("1975-05-02"),
                     citizen=["Q145"], jobs=[_FOOTBALLER], P26=[married("Q19810", "1999-07-04")],
                     P54=[played(_MAN_UTD, 1992, 2003), played(_REAL_MADRID, 2003, 2007), played(_PSG, 2013, 2013)]),
    "Q19810": person("Victoria Beckham", "English singer and fashion designer", _F, day("1974-04-17"),
                     citizen=["Q145"], jobs=[_SINGER], P26=[married("Q10520", "1999-07-04")]),
    "Q12897": person("Pelé", "Brazilian association football player (1940–2022)", _M, day("1940-10-23"), day("2022-12-29"),
                     aliases=["Edson Arantes do Nascimento"], citizen=["Q155"], jobs=[_FOOTBALLER]),
    "Q517": person("Napoleon", "French military leader and Emperor of the French (1769–1821)", _M,
                   day("1769-08-15"), day("1821-05-05"), aliases=["Napoleon Bonaparte", "Napoleon I"], citizen=["Q142"],
                   jobs=[_POLITICIAN]),
    "Q8016": person("Winston Churchill", "Prime Minister of the United Kingdom (1940–1945, 1951–1955)", _M,
                    day("1874-11-30"), day("1965-01-24"), citizen=["Q145"], jobs=[_POLITICIAN, _WRITER],
                    P166=[awarded(_LITERATURE, 1953)]),
    "Q9439": person("Queen Victoria", "Queen of the United Kingdom from 1837 to 1901", _F, day("1819-05-24"), day("1901-01-22")),
    "Q567": person("Angela Merkel", "Chancellor of Germany from 2005 to 2021", _F, day("1954-07-17"),
                   citizen=["Q183"], jobs=[_POLITICIAN]),
    "Q7747": person("Vladimir Putin", "President of Russia", _M, day("1952-10-07"), citizen=["Q159"], jobs=[_POLITICIAN]),
    "Q1124": person("Bill Clinton", "president of the United States from 1993 to 2001", _M, day("1946-08-19"),
                    citizen=["Q30"], jobs=[_POLITICIAN], P26=[married("Q6294", "1975-10-11")]),
    "Q6294": person("Hillary Clinton", "United States Secretary of State from 2009 to 2013", _F, day("1947-10-26"),
                    aliases=["Hillary Rodham Clinton"], citizen=["Q30"], jobs=[_POLITICIAN], P26=[married("Q1124", "1975-10-11")]),
    "Q5879": person("Johann Wolfgang von Goethe", "German writer and statesman (1749–1832)", _M,
                    day("1749-08-28"), day("1832-03-22"), aliases=["Goethe"], jobs=[_WRITER, _POET]),
    "Q9312": person("Immanuel Kant", "German philosopher (1724–1804)", _M, day("1724-04-22"), day("1804-02-12"),
                    aliases=["Kant"], jobs=[_PHILOSOPHER]),
    "Q8743": person("Thomas Edison", "American inventor and businessman (1847–1931)", _M, day("1847-02-11"), day("1931-10-18"),
                    aliases=["Thomas Alva Edison"], citizen=["Q30"]),
    "Q9036": person("Nikola Tesla", "Serbian-American inventor and engineer (1856–1943)", _M, day("1856-07-10"),
                    day("1943-01-07"), citizen=["Q30"]),
    "Q392": person("Bob Dylan", "American singer-songwriter", _M, day("1941-05-24"), citizen=["Q30"], jobs=[_SINGER],
                   P166=[awarded(_LITERATURE, 2016)]),
    "Q1067": person("Dante Alighieri", "Italian poet (1265–1321)", _M, year(1265, JULIAN), aliases=["Dante"], jobs=[_POET]),
    "Q7322": person("Christopher Columbus", "Italian explorer and navigator (1451–1506)", _M, year(1451, JULIAN)),
}


def _snak(pid: str, value) -> dict:
    if isinstance(value, str):
        return {"snaktype": "value", "property": pid, "datatype": "wikibase-item", "datavalue": {
            "type": "wikibase-entityid", "value": {"entity-type": "item", "numeric-id": int(value[1:]), "id": value}}}
    kind = value[0]
    if kind == "time":  # ("time", "+1952-03-11T00:00:00Z", precision[, calendar item, Gregorian by default])
        calendar = value[3] if len(value) > 3 else GREGORIAN
        return {"snaktype": "value", "property": pid, "datatype": "time", "datavalue": {"type": "time", "value": {
            "time": value[1], "timezone": 0, "before": 0, "after": 0, "precision": value[2],
            "calendarmodel": f"http://www.wikidata.org/entity/{calendar}"}}}
    if kind == "quantity":  # ("quantity", "+8611", unit item, or "1" for a plain number)
        unit = "1" if value[2] == "1" else f"http://www.wikidata.org/entity/{value[2]}"
        return {"snaktype": "value", "property": pid, "datatype": "quantity", "datavalue": {"type": "quantity", "value": {
            "amount": value[1], "unit": unit}}}
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
            elif isinstance(value, tuple) and value[0] == "qualified":  # ("qualified", value, {pid: [values]})
                qualifiers = {qpid: [_snak(qpid, qv) for qv in qvalues] for qpid, qvalues in value[2].items()}
                stmt_snak = _snak(pid, value[1])
            else:
                stmt_snak = _snak(pid, value)
            stmt = {"mainsnak": stmt_snak, "type": "statement", "id": f"{item_id}$kgstore-sample-{pid}-{n}", "rank": rank}
            if qualifiers:
                stmt["qualifiers"] = qualifiers
                stmt["qualifiers-order"] = list(qualifiers)
            stmts.append(stmt)
        out[pid] = stmts
    return out


def write(path: Path, props: dict, items: dict) -> None:
    """``props`` and ``items`` (the shapes of PROPS and ITEMS) as a dump at ``path``."""
    lines = []
    for pid, (label, desc, datatype) in props.items():
        lines.append({"type": "property", "id": pid, "datatype": datatype,
                      "labels": {"en": {"language": "en", "value": label}},
                      "descriptions": {"en": {"language": "en", "value": desc}}, "aliases": {}, "claims": {}})
    for qid, (label, desc, aliases, claims, extra) in items.items():
        labels = {"en": {"language": "en", "value": label}}
        labels.update({lang: {"language": lang, "value": v} for lang, v in extra.items()})
        lines.append({"type": "item", "id": qid, "labels": labels,
                      "descriptions": {"en": {"language": "en", "value": desc}},
                      "aliases": {"en": [{"language": "en", "value": a} for a in aliases]} if aliases else {},
                      "claims": _claims(qid, {k: v for k, v in claims.items() if v}),
                      "sitelinks": {}})
    body = ",\n".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in lines)
    path.write_text("[\n" + body + "\n]\n", encoding="utf-8")
    print(f"wrote {len(lines)} entities to {path}")


def value_items() -> dict:
    """The demo's items with VALUE_CLAIMS added to their claims, then VALUE_ITEMS."""
    items = {}
    for qid, (label, desc, aliases, claims, extra) in ITEMS.items():
        claims = {pid: list(values) for pid, values in claims.items()}
        for pid, values in VALUE_CLAIMS.get(qid, {}).items():
            claims.setdefault(pid, []).extend(values)
        items[qid] = (label, desc, aliases, claims, extra)
    clash = set(items) & set(VALUE_ITEMS)
    assert not clash, f"items written twice: {sorted(clash)}"
    items.update(VALUE_ITEMS)
    return items


def main() -> None:
    write(OUT, PROPS, ITEMS)
    write(VALUES_OUT, VALUE_PROPS, value_items())


if __name__ == "__main__":
    main()
