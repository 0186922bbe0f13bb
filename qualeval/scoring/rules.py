"""Scorers: is an extracted answer the gold one? One plain function per scorer kind of the task format."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

import orjson

from qualeval.records import AnswerSpec, ConstraintKind, Score, ScorerSpec, TaskSpec
from qualeval.scoring.constrain import constraint_for
from qualeval.scoring.extract import find_number, math_equal, normalize, token_f1
from qualeval.scoring.forms import date_years, plain_amount, written_form
from qualeval.tasks import Sample

__all__ = ["SCORERS", "ValueScorer", "constraint_cuts", "reads_math", "score"]

_PLAIN_NUMBER = re.compile(r"[-−$\d.,\s]+%?")
_PLAIN_GOLD_NUMBER = re.compile(r"[-−$\d.,\s°CFK]+")
# "Leo/Lev Tolstoy" offers two names; "km/s" is a unit and "1/2" a number
_SLASH = re.compile(r"(?<=[^\W\d_])\s*/\s*(?=[A-Z])")


def _close(a: float, b: float, spec: ScorerSpec) -> bool:
    return abs(a - b) <= max(spec.tolerance, spec.relative_tolerance * abs(b))


def _numeric(value: str, sample: Sample, spec: ScorerSpec) -> Score:
    got, gold = find_number(value), find_number(sample.gold)
    if gold is None:
        return Score(correct=False, detail=f"gold '{sample.gold}' is not a number")
    if got is None:
        return Score(correct=False, detail="no number in the answer")
    return Score(correct=_close(got, gold, spec), detail=f"{got:g} vs {gold:g}")


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
    upper lower great little old united kingdom republic empire national world"""
)
_NEGATIONS = _word_set("not no never nor neither isnt wasnt arent werent")
# words after which a name is the place or title that qualifies another: "Franz Ferdinand of Austria"
_QUALIFIED = [[w] for w in ("of", "in", "on", "at")]
_BRACKETED = re.compile(r"\s*[(\[][^)\]]*[)\]]")
_ABBREVIATION = re.compile(r"[(\[]([A-Z][A-Z0-9]{1,5})[)\]]")
# a regnal or sequel number after a name makes it another one: "Queen Elizabeth II" is not "Queen Elizabeth"
_ORDINALS = [["ii"], ["iii"], ["iv"], ["v"], ["vi"], ["vii"], ["viii"], ["ix"], ["x"], ["xi"], ["xii"], ["xiii"]]
# Wikipedia's inverted names, which TriviaQA lists as aliases: "Aden, Gulf of", "Mbeki, Thabo"
_INVERTED = re.compile(r"([^,]+),\s*([^,]+)")
_PARTICLE = re.compile(r"\s(?:of|de|the)\s*$", re.IGNORECASE)
_AND = re.compile(r"\s+(?:and|&)\s+")
# a proper name as written: capitalised words, with the particles names hold ("Vincent van Gogh", "Leonardo da Vinci")
_NAME = r"(?:[A-Z][\w'’.-]*)(?:\s+(?:[A-Z][\w'’.-]*|of|the|de|da|van|von|del|la|le)){0,3}"
_PROPER = re.compile(_NAME)
_LISTED = re.compile(rf"(?<![\w'’.-]){_NAME}[\s,]*$")
# words that join candidates into a list: a second year after "1945 and" is a second answer, after "died in" not
_LISTING = _word_set("and or to nor either maybe perhaps possibly probably between from")


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


def _within(got: list[str], alias: list[str], question: frozenset[str]) -> bool:
    """The answer is the alias but for words in front of it or a kind of thing after it: "Everest", "Vatican" -
    not what a preposition names ("Austria" of "Franz Ferdinand of Austria") nor all but its number ("October" of
    "20 october 1977")."""
    ends = any(
        all(w in _FILLER or w in _GENERIC for w in alias[at + len(got) :]) and alias[at - 1 : at] not in _QUALIFIED
        for at in _at(alias, got)
    )
    return ends and not _no_answer(got, question)


def _alias_hit(got: str, alias: str, question: frozenset[str]) -> str | None:
    """How a normalised answer matches a normalised alias: exactly, holding it, inside it, naming it, or giving
    the year of the date it is.

    Inside it means the alias's end ("Tolstoy", "Everest"), or all of it but a kind of thing ("Vatican" of "Vatican
    City"); a first name or a head word alone ("Leo", "Homo" of "Homo sapiens") is another answer.
    """
    if got == alias:
        return "matches"
    words, form = got.split(), alias.split()
    said = [w for w in words if w not in _FILLER]
    if len(said) == 1 and said[0] in date_years(alias):  # "1977" for "20 october 1977": less precise, not wrong
        return "gives the year of"
    for at in _at(words, form):
        after = words[at + len(form) : at + len(form) + 1]
        if not _NEGATIONS & set(words[max(at - 1, 0) : at]) and not _hedged(words, form, at) and after not in _ORDINALS:
            return "contains"
    if _within(words, form, question):
        return "is within"
    if _named(words, form, question):
        return "names"
    return None


def _kept(alias: str, form: str) -> bool:
    """An alias that normalising reduced to nothing or to one letter ("O-" to "o") has lost what it says; a number
    written as a word ("six" to "6") has not."""
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
    Jolson", "Sydney and Canberra"): a proper name of up to four words, capitalised as written. Lowercase words
    after "and" are a sentence going on, not a candidate; a list of other things ("Romeo and Victor" after the
    number they count) is not a second answer; an alias that itself holds "and" ("Abbott and Costello") is not
    split."""
    if any(" and " in f" {form} " for _, form in forms):
        return ""
    for before, after in itertools.pairwise(_AND.split(value)):
        # the names "and" joins: the one the list goes on from, and the one it names next
        names = [m[0] for m in (_LISTED.search(before), _PROPER.match(after.strip())) if m is not None]
        said = [written_form(name, steps) for name in names]
        if len(names) < 2 or any(not form or set(form.split()) <= question for form in said):
            continue
        right = [_hits(form, forms, question) for form in said]
        if any(right) and not all(right):  # one of them accepted, the other not: "Sydney and Canberra"
            return names[right.index(False)]
    return ""


def _hits(said: str, forms: list[tuple[str, str]], question: frozenset[str]) -> bool:
    return any(_alias_hit(said, form, question) for _, form in forms)


def _match(norm: str, forms: list[tuple[str, str]], question: frozenset[str]) -> str | None:
    """The detail of the first alias the answer matches; with alternatives ("X or Y"), every one must match."""
    parts = [norm]
    if not any(" or " in f" {form} " for _, form in forms):
        parts = [p.strip() for p in f" {norm} ".split(" or ") if p.strip()]
    hits = []
    for part in parts:
        hit = next((f"{how} '{alias}'" for alias, form in forms if (how := _alias_hit(part, form, question))), None)
        if hit is None and not all(w in _FILLER for w in part.split()):
            return None  # one of the alternatives is not an accepted answer: a hedge
        hits.append(hit)
    found = [h for h in hits if h]
    return (found[0] if len(parts) == 1 else f"each alternative matches ({'; '.join(found)})") if found else None


def _amount(value: str, accepted: list[str], spec: ScorerSpec) -> str | None:
    """The alias a plain number equals within tolerance: both sides a number and at most its unit ("1945" vs
    "1945.", "240 pounds" vs "£240"), never a number inside words; units that disagree ("$240") do not match."""
    got = find_number(value) if _PLAIN_NUMBER.fullmatch(value.strip()) else None
    amount = plain_amount(value)
    for alias in accepted:
        gold = find_number(alias)
        if got is not None and gold is not None and _PLAIN_GOLD_NUMBER.fullmatch(alias.strip()):
            if _close(got, gold, spec):
                return f"{got:g} within tolerance of '{alias}'"
        elif amount is not None and _same_amount(amount, plain_amount(alias), spec):
            return f"{amount[0]:g} within tolerance of '{alias}'"
    return None


def _same_amount(got: tuple[float, str | None], gold: tuple[float, str | None] | None, spec: ScorerSpec) -> bool:
    """Equal within tolerance, in units that agree."""
    return gold is not None and _close(got[0], gold[0], spec) and _units_agree(got, gold)


def _units_agree(got: tuple[float, str | None], gold: tuple[float, str | None] | None) -> bool:
    """A unit on one side only is no disagreement ("240" for "£240"); "$240" for "£240" is."""
    return gold is None or None in (got[1], gold[1]) or got[1] == gold[1]


def _alias(value: str, sample: Sample, spec: ScorerSpec, answer: AnswerSpec) -> Score:
    accepted = [sample.gold, *sample.aliases]
    steps = answer.normalize
    norm = written_form(_SLASH.sub(" or ", value), steps)
    known = frozenset(a.strip().lower() for a in accepted)
    amount = plain_amount(value)
    # normalising drops "$" and "%": "$25" is not "25%"
    kept = [a for a in accepted if amount is None or _units_agree(amount, plain_amount(a))]
    forms = [(alias, form) for alias in kept for form in _forms(alias, steps, known)]
    f1 = max((token_f1(norm, form) for _, form in forms), default=0.0)
    # as written, for the aliases normalising would empty ("O-")
    if whole := next((alias for alias in accepted if value.strip().lower() == alias.strip().lower()), None):
        return Score(correct=True, detail=f"matches '{whole}'", f1=f1)
    question = _question_words(sample, steps)
    if how := _match(norm, forms, question):
        if other := _another(value, forms, question, steps):
            return Score(correct=False, detail=f"{how}, but also names '{other}'", f1=f1)
        return Score(correct=True, detail=how, f1=f1)
    if how := _amount(value, accepted, spec):
        return Score(correct=True, detail=how, f1=f1)
    return Score(correct=False, detail=f"no alias matches '{value[:60]}'", f1=f1)


def _math(value: str, sample: Sample, spec: ScorerSpec, answer: AnswerSpec) -> Score:
    correct, detail = math_equal(sample.gold, value)
    return Score(correct=correct, detail=detail)


def _regex(text: str, sample: Sample, spec: ScorerSpec, answer: AnswerSpec) -> Score:
    """Searched, not full-matched: a pattern names what the answer must say (`Answer:\\s*{gold}\\b`), wherever it
    says it; `^...$` anchors it to the whole text."""
    pattern = (spec.pattern or "").replace("{gold}", re.escape(sample.gold))
    return Score(correct=re.search(pattern, text.strip()) is not None, detail=f"/{pattern}/")


def constraint_cuts(spec: TaskSpec) -> ConstraintKind | None:
    """The constraint that would cut a regex-scored task's answer to a bare value its pattern cannot match
    (`Answer:\\s*{gold}` never matches the bare `42` a number constraint leaves), else None."""
    if spec.scorer.kind != "regex" or spec.scorer.pattern is None:
        return None
    made = constraint_for(spec.answer, ("first", "second"))
    bare = made.choices[0] if made.choices else "42"
    pattern = spec.scorer.pattern.replace("{gold}", re.escape(bare))
    said = (bare, orjson.dumps({"answer": bare}).decode())  # a text answer comes back as a JSON object
    return None if any(re.search(pattern, text) for text in said) else made.kind


def _choice(value: str, sample: Sample, spec: ScorerSpec, answer: AnswerSpec) -> Score:
    same = value.strip().lower() == sample.gold.strip().lower()
    return Score(correct=same, detail=f"{value} vs {sample.gold}")


def _exact(value: str, sample: Sample, spec: ScorerSpec, answer: AnswerSpec) -> Score:
    """After what the task ignores (lm-eval's regexes_to_ignore), then the answer spec's normalisation; any of
    several golds (lm-eval's list targets) will do."""
    for pattern in spec.ignore:
        value = re.sub(pattern, "", value)
    got = normalize(value, answer.normalize)
    same = any(got == normalize(gold, answer.normalize) for gold in (sample.gold, *sample.aliases))
    return Score(correct=same, detail=f"'{value[:40]}' vs '{sample.gold[:40]}'")


@dataclass(frozen=True, slots=True)
class ValueScorer:
    """One scorer kind of an extracted value: how it judges, and how the value is to be read for it."""

    judge: Callable[[str, Sample, ScorerSpec, AnswerSpec], Score]
    math: bool = False
    """The ladder reads the answer with math-verify over the whole content (a LaTeX expression, not a number)."""
    reads_text: bool = False
    """The scorer also judges the answer text (the content after the reasoning split), not only the value the
    ladder extracted from it: a regex names the words around the answer, which the ladder cuts off."""


SCORERS: dict[str, ValueScorer] = {
    "numeric": ValueScorer(lambda value, sample, spec, _: _numeric(value, sample, spec)),
    "alias_match": ValueScorer(_alias),
    "math": ValueScorer(_math, math=True),
    "regex": ValueScorer(_regex, reads_text=True),
    "choice": ValueScorer(_choice),
    "exact": ValueScorer(_exact),
}
"""The scorers of an extracted value, by a task's `scorer.kind`; `code` and `ifeval` read the whole answer instead
(qualeval.scoring.whole.WHOLE_SCORERS)."""


def reads_math(kind: str) -> bool:
    """Whether the answer of a task scored by `kind` is read with the math ladder."""
    found = SCORERS.get(kind)
    return found is not None and found.math


def score(
    value: str | None, sample: Sample, scorer: ScorerSpec, answer: AnswerSpec, *, text: str | None = None
) -> Score:
    """Score an extracted value, and, for a scorer that reads it, the answer text `text` (never the reasoning):
    either being right is right. No value and no text is simply not correct; the status says why."""
    judge = SCORERS[scorer.kind]
    texts = [value] if value is not None else []
    if judge.reads_text and text is not None and text.strip() and text != value:
        texts.append(text)
    if not texts:
        return Score(correct=False, detail="nothing extracted")
    verdicts = [judge.judge(t, sample, scorer, answer) for t in texts]
    return next((v for v in verdicts if v.correct), verdicts[0])
