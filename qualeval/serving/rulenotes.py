"""The notes a workload's report opens with: which tool's length rule its prompts followed, how they were
counted, and llama-benchy's definitions in its own words (qualeval.serving.figures puts them in summary.json)."""

from __future__ import annotations

from qualeval.records import ShapedWorkload, Shaping

__all__ = ["BENCHY_TERMS", "rule_notes"]

BENCHY_TERMS = (
    "llama-benchy's figures as its results.py computes them, in its words: pp t/s (total), 'Prefill tokens per "
    "second (total)': a batch's prompt tokens (the server's usage.prompt_tokens where within 20% of the text's own "
    "tokens, which it expects, else those) over the time from its first request sent to its last first token; "
    "tg t/s (total), 'Generation "
    "tokens per second (total)': the tokens after each request's first, over the time from the batch's first "
    "first token to its last token; tg t/s (per user), 'Generation tokens per second (per request)'; peak t/s, "
    "'Peak generation tokens per second (total)': the most tokens in any 1-second window of a batch, each "
    "request's tokens spread evenly from its first to its last, as llama-benchy spreads them when the server "
    "sends no token_ids (summary.json: peak_total, peak_per_user); e2e_ttft, 'End-to-end Time to First Token': "
    "from sending to the first chunk with text or reasoning. ttfr is not llama-benchy's: here it is the first "
    "byte of the response (its status line, which llama-server sends before it reads the prompt), where "
    "llama-benchy's ttfr, 'Time to First Response', is the first SSE chunk with choices (llama-server sends it "
    "with the first token)."
)


def _template(shaping: Shaping) -> str:
    parts = [f"{t.tokens} for [{', '.join(t.roles)}] ({t.server} - {t.text})" for t in shaping.template or []]
    return "; ".join(parts) or "not measured"


def rule_notes(workload: ShapedWorkload, shaping: Shaping, tokens: tuple[int, int]) -> list[str]:
    """Which tool's length rule the prompts followed and how they were counted, for the report, from the
    prompts' tokens in all as shaping counted them and as the server reported them."""
    prompts, specials = workload.prompts, shaping.specials or 0
    total, served = tokens
    if workload.style == "llama-benchy":
        context = f" and its context ({prompts.context}, llama-benchy's --depth)" if prompts.context else ""
        rule = (
            f"llama-benchy's length rule: pp{prompts.input_len}{context} count{'' if context else 's'} the "
            "tokens the server "
            "processes, its chat template's included. The template's tokens, measured as llama-benchy measures "
            "them in its warm-up (usage.prompt_tokens of one request of 'Warmup ' × 10, less the text's own "
            f"tokens): {_template(shaping)}; taken off the context where there is one, else off the prompt."
        )
        return [rule, f"The server reported {served:,} prompt tokens in all (usage.prompt_tokens).", BENCHY_TERMS]
    if prompts.kind == "sharegpt":
        rule = (
            "vllm bench serve's sharegpt rule: prompt_len and output_len are the tokenizer's counts of each "
            f"conversation's first turn and its reply, with the {specials} special tokens it adds; kept where both "
            "have at least 4 tokens, the prompt at most 1,024 and both at most 2,048, in random.seed(seed)'s "
            "shuffled order, oversampled with random.choice when too few pass."
        )
    else:
        rule = (
            f"vllm bench serve's random rule: input_len counts the prompt's text, input_len less the {specials} "
            "special tokens the tokenizer adds (num_special_tokens_to_add), each length drawn from "
            "[floor(L(1 - r)), ceil(L(1 + r))] with numpy's default_rng(seed) as vllm's RandomDataset draws them."
        )
    return [
        rule,
        f"Total input tokens counts the text ({total:,}), as vllm bench serve's prompt_len does; the chat "
        f"template comes on top: the server's usage.prompt_tokens, which newer vllm bench serve reads instead, "
        f"sum to {served:,}.",
    ]
