"""`scorer: alias_match` accepts what a person accepts of a free-form answer, and refuses what a person refuses.

tests/data/freeform_verdicts.json holds (question, gold, aliases, answer, person verdict) in the shapes models write:
questions from the built-in knowledge_qa task, TriviaQA and Natural Questions (../shared/data/knowledge_qa).
tests/data/freeform_verdicts_heldout.json holds more, on NQ-open and TriviaQA questions the first file does not
use (gold and aliases as the datasets give them, the first listed answer as the gold), in the shapes the rules
used to miss: a date or number written another way, less precisely or in words, two names joined by "and", a
name qualified by a place or a title, an abbreviation in brackets. Each verdict is one person's reading of the
answer against the question and the accepted answers.
tests/data/freeform_verdicts_smollm2.json holds a real model's answers, none written for the rules: SmolLM2-135M-
Instruct (Q4_1 GGUF, llama-server b11434, temperature 0, 48 to 160 tokens) asked a seeded draw of NQ-open and TriviaQA
questions (../shared/data/knowledge_qa) and of knowledge_qa's own, each as the bare question and under the task's
prompt; every answer judged by hand against the question and the dataset's answers ("note" says why where it is
not plain), the dataset's aliases kept as they are, noise included ("Pride and prejudice" for "Mr Bingley").
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from qualeval.reasoning.completion import Completion
from qualeval.scoring.extract import normalize, words_to_digits
from qualeval.scoring.verdict import decide
from qualeval.tasks import load_task
from qualeval.tasks.sample import Sample
from qualeval.wire.models import Message
from tests.conftest import DATA

PAIRS = json.loads((DATA / "freeform_verdicts.json").read_text(encoding="utf-8"))
HELD_OUT = json.loads((DATA / "freeform_verdicts_heldout.json").read_text(encoding="utf-8"))
SMOLLM2 = json.loads((DATA / "freeform_verdicts_smollm2.json").read_text(encoding="utf-8"))
FILES = {"freeform_verdicts": PAIRS, "heldout": HELD_OUT, "smollm2": SMOLLM2}
TASK = load_task("knowledge_qa")


def _judged(question: str, gold: str, aliases: tuple[str, ...], answer: str) -> tuple[bool, str | None]:
    """(qualeval's verdict, the value it read) for an answer the model wrote."""
    sample = Sample(id="q/0", task="q", messages=(Message(role="user", content=question),), gold=gold, aliases=aliases)
    verdict = decide(TASK, sample, Completion(content=answer, status="ok"))
    return verdict.score.correct, verdict.extraction.value


def _contained(value: str | None, accepted: list[str]) -> bool:
    """The baseline: an alias inside the answer or the answer inside an alias, as whole normalised words."""
    if value is None:
        return False
    got = words_to_digits(normalize(value))
    forms = [words_to_digits(normalize(a)) for a in accepted]
    return any(form and (f" {form} " in f" {got} " or (got and f" {got} " in f" {form} ")) for form in forms)


def _tally(pair: dict[str, Any]) -> tuple[bool, bool, bool]:
    ours, value = _judged(pair["question"], pair["gold"], tuple(pair["aliases"]), pair["answer"])
    return pair["verdict"], ours, _contained(value, [pair["gold"], *pair["aliases"]])


def _first_name_alone(pair: dict[str, Any]) -> bool:
    """The answer is one word, the first of a longer name the question accepts ("Leonardo" of "Leonardo da
    Vinci"): a first name alone is rejected on purpose, though a few people are known by theirs."""
    said = words_to_digits(normalize(pair["answer"])).split()
    firsts = [words_to_digits(normalize(a)).split() for a in (pair["gold"], *pair["aliases"])]
    return len(said) == 1 and any(len(name) > 1 and name[0] == said[0] for name in firsts)


@pytest.mark.parametrize("pairs", FILES.values(), ids=FILES.keys())
def test_the_rules_accept_what_containment_accepts_at_no_more_than_3_percent_wrong(
    pairs: list[dict[str, Any]],
) -> None:
    rows = [(pair, *_tally(pair)) for pair in pairs]
    right = [(pair, ours, plain) for pair, want, ours, plain in rows if want]
    wrong = [(pair, ours, plain) for pair, want, ours, plain in rows if not want]
    assert len(rows) >= 120 and right and wrong
    assert sum(ours for _, ours, _ in right) >= sum(plain for _, _, plain in right)
    # every right answer containment accepts, the rules accept, but for a first name alone
    missed = [pair["answer"] for pair, ours, plain in right if plain and not ours and not _first_name_alone(pair)]
    assert missed == []
    accepted_wrong = [pair["answer"] for pair, ours, _ in wrong if ours]
    assert len(accepted_wrong) <= 0.03 * len(wrong), accepted_wrong
    assert sum(want is ours for _, want, ours, _ in rows) >= sum(want is plain for _, want, _, plain in rows)


MOZART = ('Who composed the opera "The Magic Flute"?', "Wolfgang Amadeus Mozart", ())
TOLSTOY = ('Who wrote "War and Peace"?', "Leo Tolstoy", ("Lev Tolstoy",))
WW2 = ("In what year did World War II end?", "1945", ())
CANBERRA = ("What is the capital of Australia?", "Canberra", ())


@pytest.mark.parametrize(
    ("item", "answer", "right"),
    [
        (CANBERRA, "The capital of Australia is Canberra.", True),
        (WW2, "World War II ended in 1945, on 2 September.", True),  # a day of the month is no second year
        (WW2, "It ended in 1945 (VE Day on 8 May, VJ Day on 2 September).", True),
        (WW2, "1945 and 1946", False),
        (WW2, "Between 1939 and 1945", False),
        (WW2, "World War II ended in 1946.", False),
    ],
)
def test_the_gold_inside_a_longer_answer(item: tuple[str, str, tuple[str, ...]], answer: str, right: bool) -> None:
    assert _judged(*item, answer)[0] is right


@pytest.mark.parametrize(
    ("item", "answer", "right"),
    [
        (MOZART, "Mozart", True),  # a surname, with no alias for it
        (MOZART, "I think it's Mozart.", True),
        (MOZART, "W. A. Mozart", True),
        (MOZART, "Leopold Mozart", False),  # another Mozart
        (MOZART, "Amadeus", False),  # a given name alone
        (("What is the highest mountain on Earth above sea level?", "Mount Everest", ()), "Everest", True),
        (("What is the highest mountain on Earth above sea level?", "Mount Everest", ()), "Mount", False),
        (
            ("Who was the 26th president of the United States?", "Theodore Roosevelt", ()),
            "Franklin D. Roosevelt",
            False,
        ),
        (("What is the capital of Mexico?", "Mexico City", ()), "Mexico", False),  # the question's own word
        (("What is the capital of Mexico?", "Mexico City", ()), "City", False),
        (("How many people live in the city, roughly?", "1 million", ()), "1", False),  # a bare number inside the gold
    ],
)
def test_an_answer_inside_the_gold(item: tuple[str, str, tuple[str, ...]], answer: str, right: bool) -> None:
    assert _judged(*item, answer)[0] is right


@pytest.mark.parametrize(
    ("item", "answer", "right"),
    [
        (TOLSTOY, "Leo Tolstoy or Lev Tolstoy", True),  # two accepted answers
        (TOLSTOY, "Leo Tolstoy/Lev Tolstoy", True),
        (TOLSTOY, "Tolstoy (Lev Tolstoy)", True),
        (TOLSTOY, "Tolstoy or Dostoevsky", False),
        (CANBERRA, "Sydney or Canberra", False),
        (WW2, "1945 or 1946", False),
        (CANBERRA, "It's not Sydney, it's Canberra.", True),
        (("What is the capital of France?", "Paris", ()), "Not Paris: I think it's Lyon.", False),
    ],
)
def test_lists_hedges_and_negations(item: tuple[str, str, tuple[str, ...]], answer: str, right: bool) -> None:
    assert _judged(*item, answer)[0] is right


def test_an_alias_that_normalising_empties_of_its_meaning_is_matched_only_whole() -> None:
    item = ("Which blood type is known as the universal donor?", "O negative", ("O-",))
    assert _judged(*item, "O-")[0] and _judged(*item, "O negative")[0]
    assert not _judged(*item, "O positive")[0]  # "O-" normalises to "o", which "O positive" holds


WWII = ("In what year did World War II end?", "2 September 1945", ())


@pytest.mark.parametrize(
    ("item", "answer", "right"),
    [
        (WWII, "Sept. 2nd, 1945", True),  # the same date written another way
        (WWII, "September 2, 1945", True),
        (WWII, "It ended on the 2nd of September 1945.", True),
        (WWII, "September 1945", True),  # less precise, not wrong
        (WWII, "1945", True),
        (WWII, "September 2, 1946", False),
        (WWII, "1946", False),
        (WWII, "September", False),  # a month inside the date is no date
        (WWII, "2", False),  # nor is its day
        (("How many legs does a spider have?", "eight", ()), "8", True),
        (("How many legs does a spider have?", "8", ()), "It has eight legs.", True),
        (("How many legs does a spider have?", "8", ()), "six", False),
        (("How many players are on the field?", "twenty-two", ()), "22", True),
        (("Roughly how many people attended?", "20,000", ()), "twenty thousand", True),
        (("Roughly how many people attended?", "20,000", ()), "2,000", False),
        (("What does the painting cost?", "£240", ()), "240 pounds", True),
        (("What does the painting cost?", "£240", ()), "$240", False),  # another currency
        (("What share of the vote did they win?", "25%", ()), "25 per cent", True),
        (("What share of the vote did they win?", "25%", ()), "$25", False),
    ],
)
def test_dates_and_numbers_written_another_way(
    item: tuple[str, str, tuple[str, ...]], answer: str, right: bool
) -> None:
    assert _judged(*item, answer)[0] is right


ARMSTRONG = ("Who was the first person to walk on the Moon?", "Neil Armstrong", ())
CASABLANCA = ("Who starred in Casablanca?", "Humphrey Bogart", ("Ingrid Bergman",))


@pytest.mark.parametrize(
    ("item", "answer", "right"),
    [
        (CASABLANCA, "Humphrey Bogart and Ingrid Bergman", True),  # two accepted answers named together
        (CASABLANCA, "Ingrid Bergman & Humphrey Bogart", True),
        (ARMSTRONG, "Neil Armstrong and Buzz Aldrin", False),  # a wrong candidate named beside the right one
        (ARMSTRONG, "Buzz Aldrin and Neil Armstrong", False),
        (CANBERRA, "Sydney and Canberra", False),
        (CANBERRA, "Canberra, and it was chosen as a compromise.", True),  # a sentence going on, not a candidate
        (ARMSTRONG, "Neil Armstrong, in July 1969 and with Apollo 11", True),
        (("How many crew were aboard?", "3", ()), "3: Neil Armstrong, Michael Collins and Buzz Aldrin", True),
        (("Which duo sang The Sound of Silence?", "Simon & Garfunkel", ()), "Simon and Garfunkel", True),
    ],
)
def test_names_joined_by_and(item: tuple[str, str, tuple[str, ...]], answer: str, right: bool) -> None:
    assert _judged(*item, answer)[0] is right


FERDINAND = ("Who was assassinated in Sarajevo in 1914?", "Archduke Franz Ferdinand of Austria", ())
THAMES = ("Which river flows through Oxford?", "River Thames in England", ())
LOUVRE = ("Where is the Louvre?", "Paris, France", ())
HENRY = ("Which English king had six wives?", "Henry VIII of England", ())


@pytest.mark.parametrize(
    ("item", "answer", "right"),
    [
        (FERDINAND, "Franz Ferdinand", True),  # the name without the place that qualifies it
        (FERDINAND, "Archduke Franz Ferdinand", True),
        (FERDINAND, "Austria", False),  # the place alone is another thing
        (THAMES, "The Thames", True),
        (THAMES, "England", False),
        (LOUVRE, "Paris", True),
        (LOUVRE, "France", False),
        (HENRY, "Henry VIII", True),
        (HENRY, "Henry VII", False),
        (("Which institution sets interest rates in the UK?", "Bank of England", ()), "Bank", False),
        (("Who was the first Duke of Wellington?", "Arthur Wellesley", ("Wellesley, Arthur",)), "Arthur", False),
        (("Which body of water is called Pirate Alley?", "Gulf of Aden", ("Aden, Gulf of",)), "Aden", False),
        (("Which queen said it?", "Queen Elizabeth I", ("Queen Elizabeth of England",)), "Queen Elizabeth II", False),
        (("Which gas do plants take in?", "carbon dioxide (CO2)", ()), "CO2", True),
        (("Which gas do plants take in?", "carbon dioxide (CO2)", ()), "Carbon dioxide", True),
        (("Which gas do plants take in?", "carbon dioxide (CO2)", ()), "carbon", False),
    ],
)
def test_names_qualified_by_a_place_a_title_or_brackets(
    item: tuple[str, str, tuple[str, ...]], answer: str, right: bool
) -> None:
    assert _judged(*item, answer)[0] is right


FRANCE = ("What is the capital of France?", "Paris", ())
JOKER = ("who plays the joker in the dark knight", "Heath Ledger", ())
BOURBON = ("Which river flows through Paris?", "Seine", ())


@pytest.mark.parametrize(
    ("item", "answer", "right"),
    [
        # a negation takes back only the name it stands before, in its own clause
        (FRANCE, "No. Paris.", True),
        (FRANCE, "No, the capital of France is Paris.", True),
        (FRANCE, "It is not Paris.", False),
        # another number in another clause, or a span's start, is no second answer
        (WW2, "It ended in 1945, and 1946 saw the Nuremberg trials begin.", True),
        (WW2, "World War II lasted from 1939 to 1945.", True),
        (WW2, "1945 and 1946", False),
        # a name that starts a new clause after "and" is the sentence going on
        (CANBERRA, "The capital of Australia is Canberra, and Sydney is its largest city.", True),
        (JOKER, "Heath Ledger played the Joker and Christian Bale played Batman.", True),
        (JOKER, "Heath Ledger and Christian Bale", False),
        # "or" offers another answer only right beside the accepted one
        (CANBERRA, "Canberra. Many people think it is Sydney or Melbourne.", True),
        (CANBERRA, "Canberra, whether or not you expected it.", True),
        (CANBERRA, "Canberra, or as Australians say, the bush capital.", True),
        (BOURBON, "The Seine, or more precisely its right bank.", True),
        (CANBERRA, "Canberra, or Sydney", False),
        (TOLSTOY, "Tolstoy, or possibly Dostoevsky", False),
        # a count is the number of what it counts
        (("how many seasons of the bastard executioner are there", "one season", ()), "one", True),
        (("how many episodes are in the first season of the show", "10 episodes", ()), "10", True),
        (("When was the treaty signed?", "20 October 1977", ()), "20", False),
        (("What are the odds?", "1 in 4", ()), "1", False),
        (("How many chromosomes does a human body cell have?", "46", ("23 pairs",)), "23", False),
    ],
)
def test_a_rejection_needs_evidence_in_the_answer(
    item: tuple[str, str, tuple[str, ...]], answer: str, right: bool
) -> None:
    assert _judged(*item, answer)[0] is right


SYDNEY = ("What is the capital of Australia?", "Sydney", ())  # a wrong gold: the answer's own words decide


@pytest.mark.parametrize(
    ("item", "answer", "right"),
    [
        # a name the answer takes back, or sets aside for another, is not its answer
        (SYDNEY, "Sydney. No wait — Canberra", False),
        (SYDNEY, "Sydney. No wait, the capital is Canberra.", False),
        (SYDNEY, "Sydney, no, actually Canberra", False),
        (SYDNEY, "Sydney - sorry, I mean Canberra", False),
        (SYDNEY, "Sydney. Correction: Canberra.", False),
        (SYDNEY, "Sydney. That's wrong.", False),
        (SYDNEY, "It's Canberra, not Sydney", False),
        (SYDNEY, "Canberra rather than Sydney", False),
        (SYDNEY, "Canberra instead of Sydney", False),
        (SYDNEY, "Canberra, as opposed to Sydney", False),
        # the name said again after the correction, or a correction that corrects something else, keeps it
        (SYDNEY, "Canberra. No wait — Sydney", True),
        (SYDNEY, "Sydney. Wait, is that right? Yes, Sydney.", True),
        (SYDNEY, "Sydney rather than Canberra", True),
        (SYDNEY, "Sydney. No, it's not Canberra.", True),
        (FRANCE, "Paris. No other city comes close.", True),
        (FRANCE, "Paris. Actually, it's a beautiful city.", True),
        (FRANCE, "Paris. Sorry, I can't be more specific.", True),
    ],
)
def test_a_name_the_answer_rejects_or_takes_back_is_not_its_answer(
    item: tuple[str, str, tuple[str, ...]], answer: str, right: bool
) -> None:
    assert _judged(*item, answer)[0] is right
