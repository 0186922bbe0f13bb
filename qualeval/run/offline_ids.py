"""Which sample of the task a response line answers, from its id.

A line's id names its sample when it is the sample's id (`gsm8k/test/6`) or its last part (`6`), or when it is
plainly the sample's number: a bare integer, lm-eval's `doc_id`, or the task's name and a number (HumanEval's
`HumanEval/6` for task humaneval). An id of another tool's making that ends in a number of its own after a separator
(ZeroEval's `gsm8k-main-test-#6`, `request-6`) names that sample only when the line's question is the sample's, or
when the user says so (`--match-by number`): tools number from 0 or 1 as they please, and a wrong guess scores
every answer against another item's gold. An id whose digits run into letters (an OpenAI Batch `batch_req_...f1c6`,
a uuid) has no number at all. `--id-map FILE` (a JSON object: their id -> the sample's id) names each sample.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import orjson

from qualeval.errors import InputError
from qualeval.tasks import Sample, Task, build_samples

__all__ = ["Index", "MatchBy", "load_id_map"]

MatchBy = Literal["id", "number"]
_OWN_NUMBER = re.compile(r"(?:^|[^0-9A-Za-z])([0-9]+)$")
"""ASCII digits that end the id after a separator (or make the whole id): a number of the id's own. A full-width
`１` is no number of the id's: the id is then not the exact spelling of any sample's."""


def load_id_map(path: Path) -> dict[str, str]:
    """`--id-map FILE`: a JSON object from the file's ids to the task's sample ids (or their last part)."""
    try:
        loaded = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise InputError(f"--id-map {path}: cannot read it ({exc.strerror})") from None
    except orjson.JSONDecodeError:
        raise InputError(f"--id-map {path}: not valid JSON") from None
    if not isinstance(loaded, dict) or not all(_an_id(v) for v in loaded.values()):
        raise InputError(f'--id-map {path}: must be a JSON object of ids, {{"their id": "gsm8k/test/0", ...}}')
    return {str(k): str(v) for k, v in loaded.items()}


def _an_id(value: object) -> bool:
    """A string or an integer: a JSON true is no sample's number, though Python counts it as 1."""
    return isinstance(value, str | int) and not isinstance(value, bool)


class Index:
    """Sample lookup by full id or by its last part, built only when some line needs the dataset."""

    def __init__(
        self, task: Task, data: Path | None, match_by: MatchBy = "id", id_map: dict[str, str] | None = None
    ) -> None:
        self.task, self.data, self.match_by, self.id_map = task, data, match_by, id_map
        self._by_id: dict[str, Sample] | None = None
        self._short: dict[str, Sample | None] = {}
        self.by_number: tuple[str, str] | None = None
        """The first id matched to a sample by its number, and that sample's id: said in the note."""

    def find(self, key: str, where: str, question: str | None = None, numbered: bool = False) -> Sample:
        """The sample `key` names. `numbered`: the format defines the id as the sample's number (lm-eval)."""
        self._build()
        assert self._by_id is not None
        if self.id_map is not None:
            named = self.mapped(key, where)
            hit = self._named(named, where, f"--id-map gives '{named}' for id '{key}': it")
        else:
            found = self._by_id.get(key) or self._short.get(key)
            hit = found or self._by_number(key, where, question, numbered or _plain_number(key))
        if not _asks(question, hit):  # whatever way the id matched, a line of another question answers another sample
            raise InputError(
                f"{where}: id '{key}' names sample {hit.id}, but the line's question is not that sample's: give "
                f"the id of the sample it answers"
            )
        return hit

    def mapped(self, key: str, where: str) -> str:
        """The id a line's sample goes by: with --id-map, the one the map gives (a line the map leaves out is
        refused, whatever else the line carries); else the line's own."""
        if self.id_map is None:
            return key
        if key not in self.id_map:
            raise InputError(f"{where}: id '{key}' is not in the --id-map file")
        return self.id_map[key]

    def _build(self) -> None:
        if self._by_id is None:
            samples = build_samples(self.task, data=self.data)
            self._by_id = {s.id: s for s in samples}
            for s in samples:
                short = s.id.rsplit("/", 1)[-1]
                self._short[short] = None if short in self._short else s  # None marks an ambiguous short id

    @property
    def at_hand(self) -> bool:
        """Whether the task's samples can be built offline: from --data, or the task's own samples or generator
        (a hub dataset is not fetched)."""
        return self.data is not None or bool(self.task.spec.samples or self.task.spec.generator)

    def check_document(self, key: str, where: str, logged: Sample) -> None:
        """An lm-eval log's document against the task's own document numbered `key` (its doc_id), by the question
        each renders to. The log's document carries its gold, so a log of another task or subject, or with its
        ids shifted, would be scored right under ids that name other items: compared or merged against a run,
        each answer would be paired with another question's."""
        if key.isdigit() and self._ambiguous(key):
            return  # a task of several subsets numbers each subset's documents: a bare doc_id names none of them
        hit = self.find(key, where, numbered=True)
        if not _asks(logged.messages[-1].content if logged.messages else None, hit):
            raise InputError(
                f"{where}: doc_id {key}: the log's document is not document {key} of task {self.task.name} (its "
                "question differs): the log is of another task or subject, or its doc_ids are shifted"
            )

    def _ambiguous(self, key: str) -> bool:
        """Whether `key` is the last part of several samples' ids (one per subset)."""
        self._build()
        return key in self._short and self._short[key] is None

    def _named(self, key: str, where: str, what: str, hint: str = "") -> Sample:
        assert self._by_id is not None  # find built the index first
        hit = self._by_id.get(key) or self._short.get(key)
        if hit is None:
            example = next(iter(self._by_id), "?")
            raise InputError(
                f"{where}: {what} is not a sample of task {self.task.name} (ids look like '{example}'){hint}"
            )
        return hit

    def _by_number(self, key: str, where: str, question: str | None, plain: bool) -> Sample:
        own = _OWN_NUMBER.search(key.strip())
        hit = self._short.get(str(int(own.group(1)))) if own else None
        if own is None or hit is None:  # names no sample: refused, naming the id
            hint = "" if own else "; map the file's ids to the task's with --id-map FILE"
            return self._named(key, where, f"id '{key}'", hint)
        if not _asks(question, hit):
            raise InputError(
                f"{where}: id '{key}' ends in the number of sample {hit.id}, but the line's question is not that "
                f"sample's: give the task's own ids ('{hit.id}')"
            )
        plain = plain or self._task_form(key[: own.start(1)], hit)
        if plain and own.group(1) != str(int(own.group(1))):  # `00` or `/test/007`: not how the task spells it
            return self._named(key, where, f"id '{key}'", f"; the number is written '{int(own.group(1))}'")
        if question is None and not plain and self.match_by != "number":
            raise InputError(
                f"{where}: id '{key}' is not an id of task {self.task.name}, and that it ends in {own.group(1)} "
                f"does not make it sample {hit.id}: if it does, say so with --match-by number; else map the ids "
                "with --id-map FILE"
            )
        if not plain:
            self.by_number = self.by_number or (key, hit.id)
        return hit

    def _task_form(self, prefix: str, hit: Sample) -> bool:
        """Whether what comes before the number is the task's name or its ids' own prefix (HumanEval/6 for task
        humaneval, whose ids are humaneval/test/6): the id is then the task's own form."""
        bare = prefix.rstrip("/#-_:. ").lower()
        return bare in (self.task.name.lower(), hit.id.rsplit("/", 1)[0].lower())


def _plain_number(key: str) -> bool:
    """A bare number, as `3` or the JSON number 3: nothing around its ASCII digits."""
    return key.isascii() and key.isdigit()


def _asks(question: str | None, sample: Sample) -> bool:
    """Whether the line's question (when it gives one) is the sample's: found in its prompt, spaces aside."""
    prompt = sample.messages[-1].content if sample.messages else ""
    return question is None or _words(question) in _words(prompt)


def _words(text: str) -> str:
    return " ".join(text.split())
