"""One written form for an answer and its aliases, so that alias matching compares what they say, not how it is
written: "20 October 1977", "Oct. 20, 1977" and "October 20th, 1977" are one date; "thirty-two" is 32, "twenty
thousand" is 20000; "&" is "and"; "£240", "240 pounds" and "240" are one amount."""

from __future__ import annotations

import re

from qualeval.scoring.extract import find_number, normalize, words_to_digits

__all__ = ["clauses", "date_years", "month_words", "plain_amount", "written_form"]

_MONTHS = {
    "january": "january", "jan": "january", "february": "february", "feb": "february", "march": "march",
    "mar": "march", "april": "april", "apr": "april", "may": "may", "june": "june", "jun": "june", "july": "july",
    "jul": "july", "august": "august", "aug": "august", "september": "september", "sep": "september",
    "sept": "september", "october": "october", "oct": "october", "november": "november", "nov": "november",
    "december": "december", "dec": "december",
}  # fmt: skip
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
# "october 20 1977" and "20th of october 1977" (after normalising: no commas, no full stops) become "20 october 1977"
_MONTH_FIRST = re.compile(rf"\b({_MONTH}) {_DAY}\b(?: (\d{{3,4}})\b)?")
_DAY_FIRST = re.compile(rf"\b{_DAY} (?:of )?({_MONTH})\b")
_MONTH_YEAR = re.compile(rf"\b({_MONTH}) (\d{{3,4}})\b")
_SCALED = re.compile(r"\b(\d+) hundred(?: and (\d{1,2})\b)?|\b(\d+) (thousand|million|billion)\b")
_SCALES = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_JOINED = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")  # "thirty-two", "Jean-Paul": two words
# a number and its unit, as symbols or words; a unit on one side only is no disagreement ("240" for "£240")
_UNITS = {"$": "dollar", "£": "pound", "€": "euro", "¥": "yen", "%": "percent"}
_UNIT_WORDS = {"dollar": "dollar", "pound": "pound", "euro": "euro", "yen": "yen", "percent": "percent"}
_AMOUNT = re.compile(
    r"(?:about|approximately|around|roughly)?\s*([$£€¥]?)\s*([-−]?\d[\d,]*(?:\.\d+)?)\s*"
    r"(%|[$£€¥]|(?:us )?dollars?|pounds?(?: sterling)?|euros?|yen|per ?cent)?",
    re.IGNORECASE,
)


def _month_first(match: re.Match[str]) -> str:
    month, day, year = _MONTHS[match[1]], match[2], match[3]
    return f"{day} {month} {year}" if year else f"{day} {month}"


def _scaled(match: re.Match[str]) -> str:
    if match[1]:
        return str(int(match[1]) * 100 + int(match[2] or 0))
    return str(int(match[3]) * _SCALES[match[4]])


def written_form(text: str, steps: tuple[str, ...]) -> str:
    """The text normalised (the task's steps), with number words as digits and dates in one order."""
    form = words_to_digits(normalize(_JOINED.sub(" ", text.replace("&", " and ")), steps))
    form = _SCALED.sub(_scaled, form)
    form = _MONTH_FIRST.sub(_month_first, form)
    form = _DAY_FIRST.sub(lambda m: f"{m[1]} {_MONTHS[m[2]]}", form)
    return _MONTH_YEAR.sub(lambda m: f"{_MONTHS[m[1]]} {m[2]}", form)


# where a clause ends: a sentence's end, a comma, colon or semicolon, brackets, a dash, a new line or list item
_CLAUSE_END = re.compile(r"[;!?\n()\[\]{}|—–]+|[,:](?=\s|$)|\s-\s|\.(?=\s|$)")
# words whose full stop ends no sentence: "St. Louis", "Dr. Who", "Mt. Everest"
_ABBREVIATED = frozenset(
    """mr mrs ms dr st jr sr mt ft vs prof gen col capt lt sgt gov sen rev fr vol inc ltd co""".split()  # noqa: SIM905
)


def clauses(text: str, steps: tuple[str, ...]) -> list[list[str]]:
    """The written forms of the text's clauses, as words: split where punctuation ends a sentence or sets off a
    phrase, never at the full stop of an initial or an abbreviation ("W. A. Mozart", "St. Louis")."""
    out, start = [], 0
    for mark in _CLAUSE_END.finditer(text):
        if mark[0] == ".":
            last = text[start : mark.start()].split()[-1:] or [""]
            word = last[0].strip("\"'([*_").lower()
            numbered = word == "no" and text[mark.end() :].lstrip()[:1].isdigit()  # "No. 5"
            if (len(word) == 1 and word.isalpha()) or word in _ABBREVIATED or numbered:
                continue
        out.append(written_form(text[start : mark.start()], steps).split())
        start = mark.end()
    out.append(written_form(text[start:], steps).split())
    return [c for c in out if c]


def month_words() -> frozenset[str]:
    """The months' names as written forms give them."""
    return frozenset(_MONTHS.values())


def date_years(form: str) -> frozenset[str]:
    """The years a written form gives as part of a date ("20 october 1977", "april 1917"): a month before them."""
    return frozenset(m[2] for m in _MONTH_YEAR.finditer(form))


def plain_amount(text: str) -> tuple[float, str | None] | None:
    """A text that is one number and at most its unit ("£240", "240 pounds", "10.5 per cent", "about 20,000"):
    the number and the unit, else None."""
    match = _AMOUNT.fullmatch(text.strip().rstrip("."))
    if match is None or (match[1] and match[3] and match[3] not in "%"):
        return None
    value = find_number(match[2])
    if value is None:
        return None
    unit = match[1] or (match[3] or "").lower()
    if unit in _UNITS:
        return value, _UNITS[unit]
    word = unit.removeprefix("us ").replace(" sterling", "").replace(" ", "").rstrip("s")
    return value, _UNIT_WORDS.get(word) if word else None
