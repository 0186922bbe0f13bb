"""Whether a server ends the thinking at a per-request budget (`--thinking-budget`): the probe's question with a
small thinking budget beside it with none, checked before a run sends budget levels."""

from __future__ import annotations

import asyncio

from qualeval.errors import InputError
from qualeval.records import BUDGET, PROBE_TIME, SEED
from qualeval.run.probepace import QUESTION, Pace, asker, is_late
from qualeval.wire import THINKING_BUDGET_FIELD, ChatClient

__all__ = ["TEST_BUDGET", "check_thinking_budget"]

TEST_BUDGET = 16
"""Thinking tokens the budget check allows: small enough that any reasoning model's answer to the probe's
question runs past it unless the server stops the thinking."""


async def check_thinking_budget(
    client: ChatClient, model: str, *, max_tokens: int = BUDGET, seconds: float = PROBE_TIME
) -> str | None:
    """Whether the server ends the thinking at a per-request budget (`thinking_token_budget`): the probe's
    question with a small budget beside it with none, within `seconds`. Raises InputError where budget levels
    would not measure what they say (refused, ignored, no thinking to cap); returns a note where it cannot tell."""
    flag, field = "probe: --thinking-budget", THINKING_BUDGET_FIELD
    ask = asker(client, model, Pace(seconds, 2))
    free, capped = await asyncio.gather(
        ask(QUESTION, SEED, max_tokens), ask(QUESTION, SEED, max_tokens, body={field: TEST_BUDGET})
    )
    if is_late(free) or is_late(capped):
        return f"{flag}: the budget check did not finish in the probe's time; {field} is sent unchecked"
    if capped.error is not None:
        raise InputError(f"{flag}: the endpoint refused {field}: {capped.error}")
    if free.error is not None:
        return f"{flag}: the budget check could not run ({free.error}); {field} is sent unchecked"
    unbounded = free.usage.reasoning_tokens or 0
    if unbounded == 0 and not free.completion.reasoning:
        raise InputError(f"{flag}: the model returned no reasoning here, so there is no thinking to cap")
    if unbounded <= 2 * TEST_BUDGET:
        return (
            f"{flag}: the model thought only {unbounded} tokens with no budget, too few to tell whether {field} "
            "holds; it is sent unchecked"
        )
    spent = capped.usage.reasoning_tokens or 0
    if spent > 2 * TEST_BUDGET:
        raise InputError(
            f"{flag}: the endpoint ignores {field}: with a budget of {TEST_BUDGET} the thinking ran to {spent} "
            f"tokens ({unbounded} with none)"
        )
    return None
