"""A sampled rerun against a fresh reference server differs as one against a fresh real server does: started
again with the same `--seed`, it must not replay the last server's sampled draws. A request that carries its own
`seed`, and a greedy one, answer the same on every server."""

from __future__ import annotations

from qualeval.sim import Behaviour
from tests.conftest import ask, chat, fast_sim, sim_url

QUESTIONS = [f"What is {n} plus {n + 3}?" for n in range(12)]


def _answers(**sampling: float | int | None) -> list[str]:
    """What one fresh server (the same --seed every time) says to each question, reasoning and answer."""
    config = fast_sim(behaviour=Behaviour(reasoning_tokens=30, accuracy=0.5, seed=7))
    with sim_url(config) as url:
        return [f"{r.raw_reasoning}|{r.raw_content}" for r in (chat(url, ask(q, **sampling)) for q in QUESTIONS)]


def test_a_sampled_rerun_on_a_fresh_server_draws_anew() -> None:
    first, again = _answers(temperature=0.8), _answers(temperature=0.8)
    assert sum(a != b for a, b in zip(first, again, strict=True)) > len(QUESTIONS) // 2


def test_a_request_seed_or_greedy_decoding_reproduces_across_servers() -> None:
    assert _answers(temperature=0.8, seed=11) == _answers(temperature=0.8, seed=11)
    assert _answers(temperature=0) == _answers(temperature=0)
