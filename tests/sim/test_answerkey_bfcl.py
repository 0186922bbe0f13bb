"""The reference server's answer to a BFCL item is the item's possible answer as a call: at --accuracy 1.0 every
item no call is kept from by its data scores right (nested objects included: BFCL lists acceptable values at
every depth)."""

from __future__ import annotations

import json

import pytest

from qualeval.records import ToolCall
from qualeval.scoring import check_calls
from qualeval.sim.answerkey import served_calls
from qualeval.tasks import build_samples, load_task
from tests.scoring import bfcl_wheel
from tests.tasks.test_bfcl import WHEEL, needs_wheel

UNWINNABLE = {"live_simple_106-63-0", "live_simple_112-68-0", "live_multiple_862-181-3", "live_multiple_964-207-0"}
"""BFCL's items whose possible answer no call can meet (tests/scoring/test_toolcheck_bfcl.py says why)."""


@needs_wheel
@pytest.mark.parametrize("category", bfcl_wheel.CALL_CATEGORIES)
def test_the_served_calls_of_every_bfcl_item_score_right(category: str) -> None:
    wrong = []
    for sample in build_samples(load_task(f"bfcl:{category}"), data=WHEEL):
        assert sample.tool_answer is not None
        keyed = served_calls(sample)
        assert keyed is not None
        calls = tuple(ToolCall(name=c.name, arguments=json.dumps(c.arguments), index=i) for i, c in enumerate(keyed))
        check = check_calls(calls, sample.tool_answer, sample.tools)
        if not check.correct and sample.id.rsplit("/", 1)[-1] not in UNWINNABLE:
            wrong.append(f"{sample.id}: {check.detail}")
    assert wrong == []
