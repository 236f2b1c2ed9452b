"""Wikidata datavalues as RDF terms, the way Wikidata's own RDF export writes them. Pure functions.

A *term* is the tail of a :class:`kgstore.Triple`: ``(o, literal, datatype, lang)``, so a
triple is ``Triple(s, p, *term)``. Every term returned here is valid N-Triples: IRIs and
language tags are checked, because one invalid term would make Oxigraph refuse a batch.

Value mapping (https://www.mediawiki.org/wiki/Wikibase/Indexing/RDF_Dump_Format):

* wikibase-entityid → ``wd:Q…``/``wd:P…``/``wd:L…``/``wd:L…-F…`` (also the old
  ``{"entity-type": "item", "numeric-id": 5}`` form without ``"id"``);
* string, external-id, math, musical-notation → plain literal;
* url → IRI when it is a valid IRI, else a plain literal;
* commonsMedia → ``<http://commons.wikimedia.org/wiki/Special:FilePath/File%20name.jpg>``;
  geo-shape and tabular-data → ``<http://commons.wikimedia.org/data/main/…>``;
* time → ``xsd:dateTime``: the sign '+' and the year's zero padding dropped, month/day
  ``00`` (precision coarser than a day) written ``01``, and proleptic Gregorian BCE years
  shifted by one because XSD 1.1 counts 1 BCE as year 0 (Julian dates pass as they are);
* quantity → ``xsd:decimal`` amount without a leading '+' (the unit lives on the value node);
* monolingualtext → language-tagged literal;
* globecoordinate → ``geo:wktLiteral`` ``Point(longitude latitude)``, prefixed by the globe's
  IRI when it is not Earth.

With full statements, time, quantity and globecoordinate values also get a *value node*
(``psv:``/``pqv:`` → ``wdv:<hash>``) holding precision, calendar, unit, bounds and globe.
"""
from __future__ import annotations

import hashlib
import json
import re
import sys
from urllib.parse import quote, quote_plus

import pyoxigraph as ox

from kgstore.terms import GEO, WD, WDV, WIKIBASE, XSD, XSD_DECIMAL, XSD_INTEGER

COMMONS_FILE = "http://commons.wikimedia.org/wiki/Special:FilePath/"
COMMONS_DATA = "http://commons.wikimedia.org/data/main/"

XSD_DATETIME = XSD + "dateTime"
XSD_DOUBLE = XSD + "double"
GEO_WKT = GEO + "wktLiteral"

GREGORIAN = WD + "Q1985727"
EARTH = WD + "Q2"
UNIT_ONE = WD + "Q199"  # Wikidata's RDF writes the unit "1" (a plain number) as wd:Q199

RANKS = {
    "normal": WIKIBASE + "NormalRank",
    "preferred": WIKIBASE + "PreferredRank",
    "deprecated": WIKIBASE + "DeprecatedRank",
}

# Entity ids: Q42, P31, L7, L7-F1, L7-S2, M123, E10.
ENTITY_ID = re.compile(r"[A-Z][1-9][0-9]*(?:-[FS][1-9][0-9]*)?")
_OLD_ID_LETTER = {"item": "Q", "property": "P", "lexeme": "L", "mediainfo": "M", "entity-schema": "E"}

# Property datatypes (JSON names) as Wikidata's RDF names them (wikibase:propertyType).
PROPERTY_TYPES = {
    "wikibase-item": "WikibaseItem", "wikibase-property": "WikibaseProperty",
    "wikibase-lexeme": "WikibaseLexeme", "wikibase-form": "WikibaseForm",
    "wikibase-sense": "WikibaseSense", "entity-schema": "EntitySchema", "string": "String",
    "external-id": "ExternalId", "url": "Url", "commonsMedia": "CommonsMedia",
    "geo-shape": "GeoShape", "tabular-data": "TabularData", "math": "Math",
    "musical-notation": "MusicalNotation", "time": "Time", "quantity": "Quantity",
    "monolingualtext": "Monolingualtext", "globe-coordinate": "GlobeCoordinate",
}

# Wikimedia language codes written as other BCP 47 tags in Wikidata's RDF (MediaWiki's
# $wgDummyLanguageCodes merged with Wikibase's canonicalLanguageCodes setting). Any other
# code that is no valid tag makes the text a plain literal rather than break the batch.
_LANGUAGE_FIXES = {
    "als": "gsw", "bat-smg": "sgs", "be-x-old": "be-tarask", "fiu-vro": "vro", "roa-rup": "rup",
    "zh-classical": "lzh", "zh-min-nan": "nan", "zh-yue": "yue",
    "simple": "en-simple", "crh": "crh-Latn", "cbk-zam": "cbk-x-zam", "map-bms": "jv-x-bms", "nrm": "fr-x-nrm",
    "roa-tara": "it-x-tara", "de-formal": "de-x-formal", "nl-informal": "nl-x-informal",
}
_language_tags: dict[str, str | None] = {}


def language_tag(code: str) -> str | None:
    """A valid BCP 47 tag for a Wikimedia language code, or None. Cached per code."""
    try:
        return _language_tags[code]
    except KeyError:
        pass
    tag = _LANGUAGE_FIXES.get(code, code)
    try:
        ox.Literal("", language=tag)
    except (ValueError, TypeError):
        tag = None
    _language_tags[code] = tag
    return tag


def entity_id(value: dict) -> str | None:
    """The id of a wikibase-entityid value (new ``id`` or old ``numeric-id`` form)."""
    eid = value.get("id")
    if eid is None:
        letter = _OLD_ID_LETTER.get(value.get("entity-type"))
        num = value.get("numeric-id")
        if letter is None or type(num) is not int:
            return None
        eid = f"{letter}{num}"
    elif type(eid) is not str:
        return None
    return eid if ENTITY_ID.fullmatch(eid) else None


def wikidata_time(value: dict) -> str | None:
    """The xsd:dateTime lexical form Wikidata's RDF gives a time value, or None when it has
    none (year 0, an unknown calendar, a malformed timestamp).

    This follows Wikibase's ``JulianDateTimeValueCleaner`` with XSD 1.1 years (what the
    dumps use): Julian dates of day precision or finer are converted to Gregorian; the
    month and day are reset to 01 below month/day precision; invalid days are clamped to
    the month's last day; BCE years of year precision or finer are shifted by one.
    """
    t = value.get("time")
    if type(t) is not str:
        return None
    precision = value.get("precision", PRECISION_DAY)
    if type(precision) is not int:
        return None
    calendar = value.get("calendarmodel", GREGORIAN)
    # Fast path, most values: "+YYYY-MM-DDThh:mm:ssZ", Gregorian, a day that every month has.
    if (len(t) == 21 and t[0] == "+" and t[1] != "0" and precision >= PRECISION_DAY
            and calendar == GREGORIAN and "01" <= t[6:8] <= "12" and "01" <= t[9:11] <= "28"):
        return t[1:]
    m = _TIME.fullmatch(t)
    if m is None:
        return None
    minus = m.group(1) == "-"
    year = int(m.group(2))
    month = min(max(int(m.group(3)), 1), 12)
    day = max(int(m.group(4)), 1)
    clock = m.group(5)
    if year == 0:
        return None  # Wikibase: year 0 is invalid
    if calendar == JULIAN and precision >= PRECISION_DAY:
        converted = _julian_to_gregorian(-year if minus else year, month, day)
        if converted is not None:
            y, mo, d = converted
            if y < 0:
                y += 1
            return f"{'-' if y < 0 else ''}{abs(y):04d}-{mo:02d}-{d:02d}T{clock}"
    elif calendar != GREGORIAN and precision >= PRECISION_DAY:
        return None
    if precision <= PRECISION_YEAR:
        month = day = 1
    elif precision == PRECISION_MONTH:
        day = 1
    if day > 28:
        safe_year = -4713 if minus and year >= 4714 else (-year if minus else year)
        day = min(day, _days_in_month(safe_year, month))
    if minus and precision >= PRECISION_YEAR:
        year -= 1
        if year == 0:
            minus = False
    return f"{'-' if minus else ''}{year:04d}-{month:02d}-{day:02d}T{clock}"


PRECISION_YEAR, PRECISION_MONTH, PRECISION_DAY = 9, 10, 11
JULIAN = WD + "Q1985786"
_TIME = re.compile(r"([+-]?)([0-9]{1,16})-([0-9]{2})-([0-9]{2})T([0-9]{2}:[0-9]{2}:[0-9]{2}Z)")


def _days_in_month(year: int, month: int) -> int:
    """Gregorian month length; ``year`` counts like PHP's calendar (no year 0: -1 is 1 BCE)."""
    if month != 2:
        return 30 if month in (4, 6, 9, 11) else 31
    astronomical = year + 1 if year < 0 else year
    leap = astronomical % 4 == 0 and (astronomical % 100 != 0 or astronomical % 400 == 0)
    return 29 if leap else 28


def _julian_to_gregorian(year: int, month: int, day: int) -> tuple[int, int, int] | None:
    """PHP's juliantojd + jdtogregorian (years without 0: -1 is 1 BCE), in their valid range."""
    if year == 0 or year < -4713 or year > 1465072 or day > 31 or (year, month, day) == (-4713, 1, 1):
        return None
    y = year + 4801 if year < 0 else year + 4800
    if month > 2:
        mo = month - 3
    else:
        mo = month + 9
        y -= 1
    sdn = (y * 1461) // 4 + (mo * 153 + 2) // 5 + day - 32083
    if sdn <= 0:
        return None
    temp = (sdn + 32045) * 4 - 1
    century = temp // 146097
    temp = ((temp % 146097) // 4) * 4 + 3
    gy = century * 100 + temp // 1461
    day_of_year = (temp % 1461) // 4 + 1
    temp = day_of_year * 5 - 3
    gm = temp // 153
    gd = (temp % 153) // 5 + 1
    if gm < 10:
        gm += 3
    else:
        gy += 1
        gm -= 9
    gy -= 4800
    if gy <= 0:
        gy -= 1
    return gy, gm, gd


_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def decimal_lexical(amount) -> str | None:
    """An xsd:decimal lexical form for a Wikibase amount ("+296033" → "296033")."""
    if type(amount) is not str:
        if type(amount) in (int, float) and amount == amount and abs(amount) != float("inf"):
            amount = repr(amount)
        else:
            return None
    if not _DECIMAL.fullmatch(amount):
        return None
    return amount[1:] if amount[0] == "+" else amount


def _number(x: float) -> str:
    """A number for WKT, which has no exponent notation."""
    text = repr(float(x))
    if "e" in text or "E" in text:
        text = f"{x:.20f}".rstrip("0").rstrip(".")
    return text


def _double(x: float) -> str:
    return repr(float(x))


def _is_double(x) -> bool:
    """True for a float, or an int a double can hold: JSON numbers have no size limit, and
    ``float()`` of a 400-digit integer raises OverflowError."""
    return type(x) is float or (type(x) is int and -_DOUBLE_MAX <= x <= _DOUBLE_MAX)


_DOUBLE_MAX = int(sys.float_info.max)


def wkt_point(value: dict) -> str | None:
    lat, lon = value.get("latitude"), value.get("longitude")
    if not (_is_double(lat) and _is_double(lon)):
        return None
    point = f"Point({_number(lon)} {_number(lat)})"
    globe = value.get("globe") or EARTH
    if globe != EARTH and type(globe) is str and _valid_iri(globe):
        point = f"<{globe}> {point}"
    return point


def commons_file_iri(name: str) -> str:
    # PHP's rawurlencode, as Wikibase writes it: "Douglas%20Adams%27%20gravestone.jpg".
    return COMMONS_FILE + quote(name, safe="")


def commons_data_iri(name: str) -> str:
    # MediaWiki's wfUrlencode, as Wikibase writes it: "Data:Taipei+Population.tab".
    return COMMONS_DATA + quote_plus(name, safe=";@$!*(),/~:")


def _valid_iri(text: str) -> bool:
    if ":" not in text:
        return False
    try:
        ox.NamedNode(text)
    except ValueError:
        return False
    return True


def value_term(datavalue, datatype: str | None = None) -> tuple | None:
    """The RDF term for a snak's ``datavalue`` (``datatype`` is the snak's property datatype,
    which tells commonsMedia and url strings apart). None when the value cannot be read:
    an unknown value type or a malformed value."""
    if type(datavalue) is not dict:
        return None
    kind = datavalue.get("type")
    value = datavalue.get("value")
    if kind == "wikibase-entityid":
        if type(value) is not dict:
            return None
        eid = value.get("id")
        # Fast path for the common "Q123"/"P123"; anything else goes through entity_id.
        if type(eid) is not str or not (eid[1:].isdigit() and eid.isascii() and eid[0] in "QPL" and eid[1] != "0"):
            eid = entity_id(value)
        return (WD + eid, False, None, None) if eid else None
    if kind == "string":
        if type(value) is not str:
            return None
        if datatype is None or datatype in _PLAIN_STRING_TYPES:
            return (value, True, None, None)
        if datatype == "commonsMedia":
            return (commons_file_iri(value), False, None, None)
        if datatype == "url":
            return (value, False, None, None) if _valid_iri(value) else (value, True, None, None)
        if datatype in ("geo-shape", "tabular-data"):
            return (commons_data_iri(value), False, None, None)
        return (value, True, None, None)
    if type(value) is not dict:
        return None
    if kind == "time":
        lexical = wikidata_time(value)
        return (lexical, True, XSD_DATETIME, None) if lexical else None
    if kind == "quantity":
        lexical = decimal_lexical(value.get("amount"))
        return (lexical, True, XSD_DECIMAL, None) if lexical else None
    if kind == "monolingualtext":
        text, code = value.get("text"), value.get("language")
        if type(text) is not str:
            return None
        tag = language_tag(code) if type(code) is str else None
        return (text, True, None, tag) if tag else (text, True, None, None)
    if kind == "globecoordinate":
        point = wkt_point(value)
        return (point, True, GEO_WKT, None) if point else None
    return None


_PLAIN_STRING_TYPES = frozenset({"string", "external-id", "math", "musical-notation"})
VALUE_NODE_TYPES = frozenset({"time", "quantity", "globecoordinate"})


def value_node(datavalue: dict) -> tuple[str, list[tuple]] | None:
    """For full statements: the value node IRI of a time, quantity or globecoordinate value
    and its ``(predicate, term)`` pairs. None for other value types or malformed values."""
    kind = datavalue.get("type")
    if kind not in VALUE_NODE_TYPES:
        return None
    value = datavalue.get("value")
    if type(value) is not dict:
        return None
    props: list[tuple] = []
    if kind == "time":
        lexical = wikidata_time(value)
        if lexical is None:
            return None
        props.append((WIKIBASE + "timeValue", (lexical, True, XSD_DATETIME, None)))
        for key, pred in (("precision", "timePrecision"), ("timezone", "timeTimezone")):
            if type(value.get(key)) is int:
                props.append((WIKIBASE + pred, (str(value[key]), True, XSD_INTEGER, None)))
        calendar = value.get("calendarmodel")
        if type(calendar) is str and _valid_iri(calendar):
            props.append((WIKIBASE + "timeCalendarModel", (calendar, False, None, None)))
    elif kind == "quantity":
        amount = decimal_lexical(value.get("amount"))
        if amount is None:
            return None
        props.append((WIKIBASE + "quantityAmount", (amount, True, XSD_DECIMAL, None)))
        for key, pred in (("upperBound", "quantityUpperBound"), ("lowerBound", "quantityLowerBound")):
            bound = decimal_lexical(value.get(key)) if key in value else None
            if bound is not None:
                props.append((WIKIBASE + pred, (bound, True, XSD_DECIMAL, None)))
        unit = value.get("unit")
        unit = UNIT_ONE if unit in (None, "1") else unit
        if type(unit) is str and _valid_iri(unit):
            props.append((WIKIBASE + "quantityUnit", (unit, False, None, None)))
    else:
        lat, lon = value.get("latitude"), value.get("longitude")
        if not (_is_double(lat) and _is_double(lon)):
            return None
        props.append((WIKIBASE + "geoLatitude", (_double(lat), True, XSD_DOUBLE, None)))
        props.append((WIKIBASE + "geoLongitude", (_double(lon), True, XSD_DOUBLE, None)))
        if _is_double(value.get("precision")):
            props.append((WIKIBASE + "geoPrecision", (_double(value["precision"]), True, XSD_DOUBLE, None)))
        globe = value.get("globe") or EARTH
        if type(globe) is str and _valid_iri(globe):
            props.append((WIKIBASE + "geoGlobe", (globe, False, None, None)))
    digest = hashlib.md5(json.dumps(value, sort_keys=True).encode("utf-8")).hexdigest()
    return WDV + digest, props


def property_type_iri(datatype: str) -> str:
    name = PROPERTY_TYPES.get(datatype)
    if name is None:
        name = "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", datatype) if part)
    return WIKIBASE + (name or "Unknown")
