"""A task's item lives with tasks: the wire carries requests and responses and knows nothing of samples."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

import qualeval
import qualeval.wire.models as wire_models
from qualeval.tasks import Sample
from qualeval.wire.models import Message


def test_a_sample_is_the_tasks_own_and_the_public_name_is_that_one() -> None:
    assert Sample.__module__ == "qualeval.tasks.sample"
    assert qualeval.Sample is Sample
    assert not hasattr(wire_models, "Sample") and "Sample" not in wire_models.__all__


def test_a_sample_keeps_its_fields_and_stays_frozen() -> None:
    sample = Sample(id="t/test/0", task="t", messages=(Message(role="user", content="2 + 2?"),), gold="4")
    assert (sample.scored, sample.choices, sample.meta, sample.shape) == (True, (), {}, None)
    with pytest.raises(ValidationError, match="frozen"):
        sample.gold = "5"  # type: ignore[misc]
