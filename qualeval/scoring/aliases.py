"""The `alias_match` scorer: is a free-form answer one of the accepted answers?

An answer that holds an accepted answer as whole words, or that is part of one, is right unless the answer itself
gives specific evidence against it: a negation or a rejection ("rather than") right before it, a correction after
it ("No wait — Canberra": qualeval.scoring.retract), a regnal number right after it, another number or
candidate offered beside it in the same clause, or, for an answer that is only part of the accepted one, a first
name, a kind of thing, the question's own words or a number that is part of another. Clauses matter: "No, Paris"
and "It ended in 1945, and 1946 saw the trials begin" take nothing back.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

from qualeval.records import AnswerSpec, Score, ScorerSpec
from qualeval.scoring.extract import find_number, token_f1
from qualeval.scoring.forms import clauses, date_years, month_words, plain_amount, written_form
from qualeval.scoring.retract import SKIPPED, rejected, retracted
from qualeval.tasks import Sample

__all__ = ["alias_score", "close_enough"]

_PLAIN_NUMBER = re.compile(r"[-−$\d.,\s]+%?")
_PLAIN_GOLD_NUMBER = re.compile(r"[-−$\d.,\s°CFK]+")
# "Leo/Lev Tolstoy" offers two names; "km/s" is a unit and "1/2" a number
_SLASH = re.compile(r"(?<=[^\W\d_])\s*/\s*(?=[A-Z])")


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that carry no answer of their own: function words, hedges and the phrasing of a reply ("I think it's ...").
# Negations are not among them: "not Mozart" names Mozart to reject him.
_FILLER = _word_set(
    """i me my we our you your he him his she her it its they them their this that these those there here is are
    was were be been being am has have had do does did will would shall should can could may might must of in on at
    to for from by with as into about than then so also just only what which who whom whose where when why how think
    thought believe guess suppose probably likely maybe perhaps possibly presumably surely certainly definitely
    pretty quite very sure fairly actually indeed exactly answer final correct right called known named yes"""
)
# Words that name a kind of thing, not the thing: alone they are no answer ("City" for "Mexico City")
_GENERIC = _word_set(
    """city town village capital country nation state states province county region river lake sea ocean bay gulf
    strait island islands isle mount mountain mountains hill valley desert forest park street road way bridge tower
    church cathedral temple palace castle university college school king queen prince princess lord lady sir saint
    st pope emperor president general captain doctor dr mr mrs ms professor war battle new north south east west
    upper lower great little old united kingdom republic empire national world species genus family type kind sort
    variety breed"""
)
# nouns that count several of a thing: "23" of "23 pairs" is not the count of the things paired
_MULTIPLIERS = _word_set("pair pairs couple couples dozen dozens score scores gross")
_NEGATIONS = _word_set("not no never nor neither isnt wasnt arent werent")
# words after which a name is the place or title that qualifies another: "Franz Ferdinand of Austria"
_QUALIFIED = [[w] for w in ("of", "in", "on", "at")]
_BRACKETED = re.compile(r"\s*[(\[][^)\]]*[)\]]")
_ABBREVIATION = re.compile(r"[(\[]([A-Z][A-Z0-9]{1,5})[)\]]")
# a regnal or sequel number after a name makes it another one: "Queen Elizabeth II" is not "Queen Elizabeth"
_ORDINALS = _word_set("ii iii iv v vi vii viii ix x xi xii xiii")
# Wikipedia's inverted names, which TriviaQA lists as aliases: "Aden, Gulf of", "Mbeki, Thabo"
_INVERTED = re.compile(r"([^,]+),\s*([^,]+)")
_PARTICLE = re.compile(r"\s(?:of|de|the)\s*$", re.IGNORECASE)
_AND = re.compile(r"\s+(?:and|&)\s+")
# a proper name as written: capitalised words, with the particles names hold ("Vincent van Gogh", "Leonardo da Vinci")
_NAME = r"(?:[A-Z][\w'’.-]*)(?:\s+(?:[A-Z][\w'’.-]*|of|the|de|da|van|von|del|la|le)){0,3}"
_PROPER = re.compile(_NAME)
_NAMED = re.compile(r"\b[A-Z0-9][\w'’.-]*")
_LISTED = re.compile(rf"(?<![\w'’.-]){_NAME}[\s,]*$")
# what may follow the last name of a list: its end, or a verb that says the names go together
_LIST_ENDS = re.compile(r"\s*(?:$|[.,;:!?)\]\n]|\s(?:are|were|both|respectively)\b)")
# words that join candidates into a list: a second year after "1945 and" is a second answer, after "died in" not;
# "from 1939 to 1945" is a span that ends in 1945, not a choice between the two
_LISTING = _word_set("and or nor either maybe perhaps possibly probably between")
_HEDGES = _word_set("maybe perhaps possibly probably likely even")
# "or" in a phrase that offers no other answer: "whether or not", "20 or so", "or more"
_OR_IDIOM = re.compile(r"\bor (?=(?:not|so|more|less|fewer|thereabouts|otherwise|else)\b)", re.IGNORECASE)
_DECIMAL = re.compile(r"(?<![\d.])(\d[\d,]*)\.(?=\d)(\d*?)0*(?!\.?\d)")  # not "3.1.4"


def close_enough(a: float, b: float, spec: ScorerSpec) -> bool:
    return abs(a - b) <= max(spec.tolerance, spec.relative_tolerance * abs(b))


def _decimals(text: str) -> str:
    """A decimal as one word normalising keeps, less its trailing zeros: "3.66" is "3p66", not 366; "1.00" is 1."""
    return _DECIMAL.sub(lambda m: f"{m[1]}p{m[2]}" if m[2] else m[1], text)


@dataclass(frozen=True, slots=True)
class _Said:
    """An answer in written form: all its words, the words of each of its clauses, and the words it writes as a
    name or a number (capitalised, or digits), which alone may stand as a correction's new candidate."""

    words: list[str]
    parts: list[list[str]]
    named: frozenset[str] = frozenset()

    @classmethod
    def of(cls, words: list[str]) -> _Said:
        return cls(words, [words])


Accepts = Callable[[list[str]], bool]
"""Whether some accepted answer matches these words: a candidate offered beside the alias may be another alias."""


def _at(words: list[str], part: list[str]) -> list[int]:
    """Where `part` stands in `words`, as whole words."""
    return [i for i in range(len(words) - len(part) + 1) if words[i : i + len(part)] == part]


def _hedged(got: list[str], alias: list[str], at: int) -> bool:
    """A number the alias does not hold, of the size of one it does, listed beside it: "1945 and 1946"."""
    sizes = {len(w) for w in alias if w.isdigit()}
    for i, word in enumerate(got):
        if word.isdigit() and word not in alias and len(word) in sizes:
            lo, hi = (i + 1, at) if i < at else (at + len(alias), i)
            if all(w in _LISTING for w in got[lo:hi]):
                return True
    return False


def _offered(clause: list[str], alias: list[str], at: int, question: frozenset[str], accepts: Accepts) -> bool:
    """Another candidate offered with "or" right beside the alias, that no alias accepts: "Sydney or Canberra",
    "1945 or 1946". A phrase after "or" that starts with a function word ("or, as Australians say, ...") or runs
    past four words is the sentence going on, not a candidate."""
    end = at + len(alias)
    if clause[end : end + 1] == ["or"]:
        other = clause[end + 1 :]
        other = other[: other.index("or")] if "or" in other else other
        other = list(itertools.dropwhile(lambda w: w in _HEDGES, other))  # "Shakespeare, or possibly Marlowe"
    elif clause[at - 1 : at] == ["or"] and at > 0:
        before = clause[: at - 1]
        other = before[len(before) - before[::-1].index("or") :] if "or" in before else before
        # the words that lead up to the candidate: "I think it is Sydney or Canberra"
        other = list(itertools.dropwhile(lambda w: w in _FILLER or w in _GENERIC or w in question, other))
    else:
        return False
    if not other or len(other) > 4 or other[0] in _FILLER or other[0] in _NEGATIONS:
        return False
    return not accepts(other) and not set(other) <= question


def _taken_back(clause: list[str], alias: list[str], at: int, question: frozenset[str], accepts: Accepts) -> bool:
    """Whether the clause holding the alias at `at` says something else than the alias: "not Paris", "Paris is
    wrong", "Elizabeth II" for "Elizabeth", "1945 and 1946", "Sydney or Canberra"."""
    after = clause[at + len(alias) : at + len(alias) + 1]
    return (
        bool(_NEGATIONS & set(clause[max(at - 1, 0) : at]))
        or rejected(clause, at, at + len(alias), _FILLER | question)
        or (bool(after) and after[0] in _ORDINALS and not alias[-1].isdigit())
        or _hedged(clause, alias, at)
        or _offered(clause, alias, at, question, accepts)
    )


def _replaces(said: _Said, question: frozenset[str], accepts: Accepts) -> Callable[[list[str]], bool]:
    """Whether the words after a correction's marker are a new candidate no alias accepts: after the words that
    lead up to it ("it's", "I mean"), up to four words with no function word among them, the first written as a
    name or a number ("No wait — Canberra"), not "it's a lovely city"."""

    def replaces(words: list[str]) -> bool:
        other = list(itertools.dropwhile(lambda w: w in _FILLER or w in SKIPPED or w in question, words))
        if not other or len(other) > 4 or other[0] not in said.named or all(w in _GENERIC for w in other):
            return False
        return not any(w in _FILLER or w in _NEGATIONS for w in other[1:]) and not accepts(other)

    return replaces


def _holds(said: _Said, alias: list[str], question: frozenset[str], accepts: Accepts) -> bool:
    """The alias stands in one of the answer's clauses with nothing there taking it back, nor a correction after
    it; an alias that only a clause break splits ("Paris, France") is judged on the whole answer."""
    found = False
    replaces = _replaces(said, question, accepts)
    for number, clause in enumerate(said.parts):
        for at in _at(clause, alias):
            found = True
            gone = _taken_back(clause, alias, at, question, accepts)
            if not gone and not retracted(said.parts, number, at + len(alias), replaces):
                return True
    if found:
        return False
    return any(not _taken_back(said.words, alias, at, question, accepts) for at in _at(said.words, alias))


def _no_answer(words: list[str], question: frozenset[str]) -> bool:
    """Only filler, kinds of things, the question's own words or a bare number: not an answer by itself."""
    return all(w.isdigit() for w in words) or all(w in _FILLER or w in _GENERIC or w in question for w in words)


def _initial(word: str, alias: list[str]) -> bool:
    """One letter standing for a word of the name: the W and A of "W. A. Mozart"."""
    return len(word) == 1 and any(w.startswith(word) for w in alias[:-1])


def _named(got: list[str], alias: list[str], question: frozenset[str]) -> bool:
    """The alias's last words (a surname, a name without its title), in its order, among filler: "I think it's
    Mozart", "written by Leo Tolstoy" - not "Franklin D. Roosevelt" for "Theodore Roosevelt"."""
    tail = alias[-1]
    if len(alias) < 2 or [alias[-2]] in _QUALIFIED or _no_answer([tail], question):
        return False  # "Mexico" of "Gulf of Mexico" is another place
    quiet = _FILLER | question
    for i in _at(got, [tail]):
        start = i
        while start > 0 and (got[start - 1] in alias or _initial(got[start - 1], alias)):
            start -= 1
        around = got[max(start - 1, 0) : start] + got[i + 1 : i + 2]
        said = [w for w in got[start : i + 1] if w in alias]
        if alias[-len(said) :] == said and all(w in quiet for w in around) and not _NEGATIONS & set(got[:i]):
            return True
    return False


def _counted(got: list[str], alias: list[str]) -> bool:
    """A bare number that is the alias's only number, with no date around it: "7" of "7 episodes", "1" of "1
    season" - not "20" of "20 october 1977", "1" of "1 in 4", nor "23" of "23 pairs"."""
    months = month_words()
    others = [w for w in alias if w not in got]
    apart = any(w.isdigit() or w in months or w in _MULTIPLIERS for w in others)
    return all(w.isdigit() for w in got) and not apart


def _within(got: list[str], alias: list[str], question: frozenset[str]) -> bool:
    """The answer is the alias but for words in front of it or a kind of thing after it: "Everest", "Vatican" -
    not what a preposition names ("Austria" of "Franz Ferdinand of Austria"), a first name or a head word alone
    ("Leo", "Homo" of "Homo sapiens"), nor all but its number ("October" of "20 october 1977"). A number is the
    count of what the alias counts: "7" of "7 episodes"."""
    spots = [at for at in _at(alias, got) if alias[at - 1 : at] not in _QUALIFIED]
    if spots and _counted(got, alias):
        return True
    ends = any(all(w in _FILLER or w in _GENERIC for w in alias[at + len(got) :]) for at in spots)
    return ends and not _no_answer(got, question)


def _alias_hit(said: _Said, alias: str, question: frozenset[str], accepts: Accepts) -> str | None:
    """How a written answer matches an alias: exactly, holding it, inside it, naming it, or by its date's year."""
    words, form = said.words, alias.split()
    if words == form:
        return "matches"
    kept = [w for w in words if w not in _FILLER]
    if len(kept) == 1 and kept[0] in date_years(alias):  # "1977" for "20 october 1977": less precise, not wrong
        return "gives the year of"
    if _holds(said, form, question, accepts):
        return "contains"
    if _within(words, form, question):
        return "is within"
    if _named(words, form, question):
        return "names"
    return None


def _kept(alias: str, form: str) -> bool:
    """An alias normalised to nothing or one letter ("O-" to "o") lost what it says; "six" to "6" did not."""
    return len(form) > 1 or form.isdigit() or (len(form) == 1 and len(alias.strip()) == 1)


def _forms(alias: str, steps: tuple[str, ...], accepted: frozenset[str]) -> list[str]:
    """The written forms an alias stands for: itself, or the name an inverted one stands for ("Mbeki, Thabo" where
    "Thabo Mbeki" is accepted too, "Aden, Gulf of"); without what its brackets add ("adenosine diphosphate
    (ADP)"), and the abbreviation they give; without the place or title its name is qualified by ("Lituya Bay in
    Alaska", "Archduke Franz Ferdinand of Austria", "Paris, France") when the name is more than a kind of thing
    ("Gulf of Aden"). The qualifier alone is another thing ("Austria", "France")."""
    comma = _INVERTED.fullmatch(alias.strip())
    shortest = 2  # "Bank" of "Bank of England" is not the bank, "Paris" of "Paris, France" is Paris
    if comma and (_PARTICLE.search(comma[2]) or f"{comma[2]} {comma[1]}".lower() in accepted):
        alias = f"{comma[2]} {comma[1]}"
    elif comma and _PROPER.fullmatch(comma[2].strip()):
        alias, shortest = f"{comma[1]} in {comma[2]}", 1  # read as what it says: Paris, in France
    forms = [written_form(alias, steps)]
    bare = _BRACKETED.sub("", alias).strip()
    if bare and bare != alias.strip():
        forms += [written_form(bare, steps), *(written_form(a, steps) for a in _ABBREVIATION.findall(alias))]
    words = written_form(bare or alias, steps).split()
    cut = next((i for i, w in enumerate(words) if [w] in _QUALIFIED), len(words))
    if shortest <= cut < len(words) and not _no_answer(words[:cut], frozenset()):
        forms.append(" ".join(words[:cut]))
    return [f for f in dict.fromkeys(forms) if _kept(alias, f)]


def _question_words(sample: Sample, steps: tuple[str, ...]) -> frozenset[str]:
    asked = [m.content for m in sample.messages if m.role == "user"]
    return frozenset(written_form(asked[-1], steps).split()) if asked else frozenset()


def _another(value: str, forms: list[tuple[str, str]], question: frozenset[str], steps: tuple[str, ...]) -> str:
    """A second name listed with "and" beside the accepted one that no alias accepts ("Rudy Vallee and Al
    Jolson", "Sydney and Canberra"): a proper name of up to four words, capitalised as written, that ends the
    list. Lowercase words after "and", or a name that a verb follows ("Canberra, and Sydney is its largest city"),
    are a sentence going on, not a candidate; a list of other things ("Romeo and Victor" after the number they
    count) is not a second answer; an alias that itself holds "and" ("Abbott and Costello") is not split."""
    if any(" and " in f" {form} " for _, form in forms):
        return ""
    for before, after in itertools.pairwise(_AND.split(value)):
        # the names "and" joins: the one the list goes on from, and the one it names next, which ends the list
        listed, named = _LISTED.search(before), _PROPER.match(after.strip())
        if listed is None or named is None or not _LIST_ENDS.match(after.strip()[named.end() :]):
            continue
        names = [listed[0], named[0]]
        said = [written_form(name, steps) for name in names]
        if any(not form or set(form.split()) <= question for form in said):
            continue
        right = [_hits(form, forms, question) for form in said]
        if any(right) and not all(right):  # one of them accepted, the other not: "Sydney and Canberra"
            return names[right.index(False)]
    return ""


def _hits(said: str, forms: list[tuple[str, str]], question: frozenset[str]) -> bool:
    return _first_hit(_Said.of(said.split()), forms, question) is not None


def _first_hit(said: _Said, forms: list[tuple[str, str]], question: frozenset[str]) -> str | None:
    def accepts(words: list[str]) -> bool:
        return _first_hit(_Said.of(words), forms, question) is not None

    hits = (f"{how} '{alias}'" for alias, form in forms if (how := _alias_hit(said, form, question, accepts)))
    return next(hits, None)


def _match(said: _Said, forms: list[tuple[str, str]], question: frozenset[str]) -> str | None:
    """The first alias matched; else, of alternatives ("Tolstoy or Lev Tolstoy") holding none whole, each."""
    if hit := _first_hit(said, forms, question):
        return hit
    norm = " ".join(said.words)
    if any(" or " in f" {form} " for _, form in forms) or " or " not in f" {norm} ":
        return None
    hits = []
    for part in (p.strip() for p in f" {norm} ".split(" or ") if p.strip()):
        hit = _first_hit(_Said.of(part.split()), forms, question)
        if hit is None and not all(w in _FILLER for w in part.split()):
            return None  # one of the alternatives is not an accepted answer: a hedge
        hits.append(hit)
    found = [h for h in hits if h]
    return f"each alternative matches ({'; '.join(found)})" if found else None


def _amount(value: str, accepted: list[str], spec: ScorerSpec) -> str | None:
    """The alias a plain number equals within tolerance: both sides a number and at most its unit ("1945" vs
    "1945.", "240 pounds" vs "£240"), never a number inside words; units that disagree ("$240") do not match."""
    got = find_number(value) if _PLAIN_NUMBER.fullmatch(value.strip()) else None
    amount = plain_amount(value)
    for alias in accepted:
        gold = find_number(alias)
        if got is not None and gold is not None and _PLAIN_GOLD_NUMBER.fullmatch(alias.strip()):
            if close_enough(got, gold, spec):
                return f"{got:g} within tolerance of '{alias}'"
        elif amount is not None and _same_amount(amount, plain_amount(alias), spec):
            return f"{amount[0]:g} within tolerance of '{alias}'"
    return None


def _same_amount(got: tuple[float, str | None], gold: tuple[float, str | None] | None, spec: ScorerSpec) -> bool:
    """Equal within tolerance, in units that agree."""
    return gold is not None and close_enough(got[0], gold[0], spec) and _units_agree(got, gold)


def _units_agree(got: tuple[float, str | None], gold: tuple[float, str | None] | None) -> bool:
    """A unit on one side only is no disagreement ("240" for "£240"); "$240" for "£240" is."""
    return gold is None or None in (got[1], gold[1]) or got[1] == gold[1]


def _joined(parts: list[list[str]]) -> list[list[str]]:
    """Clauses, with one that starts with "or" read with the one before it: "Canberra, or Sydney" offers two."""
    out: list[list[str]] = []
    for part in parts:
        if out and part[0] == "or":
            out[-1] = out[-1] + part
        else:
            out.append(part)
    return out


def alias_score(value: str, sample: Sample, spec: ScorerSpec, answer: AnswerSpec) -> Score:
    """The verdict on a free-form answer against the gold and its aliases."""
    accepted = [sample.gold, *sample.aliases]
    steps = answer.normalize
    offered = _OR_IDIOM.sub("", _SLASH.sub(" or ", _decimals(value)))
    named = frozenset(written_form(w, steps) for w in _NAMED.findall(offered))
    said = _Said(written_form(offered, steps).split(), _joined(clauses(offered, steps)), named)
    known = frozenset(a.strip().lower() for a in accepted)
    amount = plain_amount(value)
    # normalising drops "$" and "%": "$25" is not "25%"
    kept = [a for a in accepted if amount is None or _units_agree(amount, plain_amount(a))]
    forms = [(alias, form) for alias in kept for form in _forms(_decimals(alias), steps, known)]
    f1 = max((token_f1(" ".join(said.words), form) for _, form in forms), default=0.0)
    # as written, for the aliases normalising would empty ("O-")
    if whole := next((alias for alias in accepted if value.strip().lower() == alias.strip().lower()), None):
        return Score(correct=True, detail=f"matches '{whole}'", f1=f1)
    question = _question_words(sample, steps)
    if how := _match(said, forms, question):
        if other := _another(value, forms, question, steps):
            return Score(correct=False, detail=f"{how}, but also names '{other}'", f1=f1)
        return Score(correct=True, detail=how, f1=f1)
    if how := _amount(value, accepted, spec):
        return Score(correct=True, detail=how, f1=f1)
    return Score(correct=False, detail=f"no alias matches '{value[:60]}'", f1=f1)
