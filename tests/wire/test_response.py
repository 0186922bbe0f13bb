"""A reply's completion status from what the server said and what it counted."""

from __future__ import annotations

from typing import Any

import pytest

from qualeval.reasoning.formats import resolve_formats
from qualeval.wire.response import build_response
from qualeval.wire.stream import Attempt
from tests.conftest import ask


def _status(finish: str, usage: dict[str, Any] | None, max_tokens: int | None = 64) -> tuple[str, str | None]:
    got = Attempt(content="The answer is", fields={}, finish=finish, usage=usage, timings=None, sent=0.0,
                  first_byte=0.1, end=0.2)  # fmt: skip
    request = ask("q", max_tokens=max_tokens, stream=False)
    response = build_response(request, got, resolve_formats(None), opened=False, attempts=1, queued=None)
    return response.completion.status, response.finish_reason


def test_a_stop_at_exactly_max_tokens_is_a_truncation_like_length() -> None:
    cut, said = _status("stop", {"prompt_tokens": 9, "completion_tokens": 64})
    assert cut == _status("length", {"prompt_tokens": 9, "completion_tokens": 64})[0]
    assert cut == "answer_truncated"
    assert said == "stop"  # the server's own word is kept as it said it


@pytest.mark.parametrize(
    ("usage", "max_tokens"),
    [
        ({"prompt_tokens": 9, "completion_tokens": 63}, 64),  # stopped before the budget: a finished answer
        (None, 64),  # no count from the server: an estimate never makes a truncation
        ({"prompt_tokens": 9, "completion_tokens": 64}, None),  # no budget was asked for
    ],
)
def test_a_stop_short_of_the_budget_or_uncounted_is_finished(
    usage: dict[str, Any] | None, max_tokens: int | None
) -> None:
    assert _status("stop", usage, max_tokens)[0] == "ok"


CUT = "answer_truncated"


@pytest.mark.parametrize(
    ("finish", "status"), [("LENGTH", CUT), ("MAX_TOKENS", CUT), ("max_tokens", CUT), ("STOP", "ok"), ("eos", "ok")]
)
def test_finish_reasons_in_other_spellings_are_read_as_openais(finish: str, status: str) -> None:
    assert _status(finish, None) == (status, finish)


def test_an_unknown_finish_reason_is_a_warning_once_never_a_silent_ok() -> None:
    from qualeval.errors import QualevalWarning

    told: set[str] = set()
    got = Attempt(content="The answer is", fields={}, finish="weird", usage=None, timings=None, sent=0.0,
                  first_byte=0.1, end=0.2)  # fmt: skip
    request = ask("q", max_tokens=64, stream=False)
    with pytest.warns(QualevalWarning, match="finish_reason 'weird', which qualeval does not know"):
        build_response(request, got, resolve_formats(None), opened=False, attempts=1, queued=None, told=told)
    assert told == {"weird"}
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once per client: a second response with the same word is quiet
        build_response(request, got, resolve_formats(None), opened=False, attempts=1, queued=None, told=told)


def test_an_abort_in_any_case_is_an_endpoint_error() -> None:
    got = Attempt(content="The answer is", fields={}, finish="ABORT", usage=None, timings=None, sent=0.0,
                  first_byte=0.1, end=0.2)  # fmt: skip
    response = build_response(ask("q", max_tokens=64, stream=False), got, resolve_formats(None), opened=False,
                              attempts=1, queued=None)  # fmt: skip
    assert response.completion.status == "transport_error"
    assert response.error == "the server aborted the generation (finish_reason 'ABORT')"
