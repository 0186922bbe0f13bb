"""What `qualeval probe` found an endpoint to do (`--json FILE`, and the manifest's `server.probe`), and the
conventions it names, which every record names too: where reasoning comes back (ReasoningSource), and the
structured-output conventions and constraint modes (qualeval.scoring.constrain sends them, qualeval.run.probing
checks them). They are defined here, not in record.py, because record.py's ConstraintRecord needs them and this
module must not import record.py back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints

from qualeval.records.passback import Passback, PassbackCheck

__all__ = [
    "BUDGET",
    "PROBE_TIME",
    "SEED",
    "STYLES",
    "AppliedMode",
    "ConstraintKind",
    "Mode",
    "ModeResult",
    "ProbeResult",
    "ProbeVerdict",
    "ReasoningSource",
    "Style",
    "ToolContract",
    "contract_of",
    "passback_found",
    "probe_time_option",
    "styles_from_probe",
]

BUDGET = 2048
"""Start token budget of each probe request (a sample that runs out is sent again with more)."""
SEED = 1234
"""The first of the seeds the probe samples with: seed + 0, seed + 1, ... for the repeats of a check."""
PROBE_TIME = 90.0
"""Seconds the probe may take in all, by default: a few rounds of a slow server's requests, yet a short wait before
a run's first item."""


def probe_time_option() -> Any:
    """The probe's time budget, declared once for `qualeval probe` (ProbeOptions) and `qualeval run` (RunConfig)."""
    return Field(
        PROBE_TIME,
        gt=0,
        description="Seconds the probe may take in all; a check it could not finish in time is inconclusive, and "
        "a run goes on with the defaults for it.",
    )


Style = Literal["structured_outputs", "guided", "sglang", "response_format", "json_schema", "grammar"]
STYLES: tuple[Style, ...] = ("structured_outputs", "guided", "sglang", "response_format", "json_schema", "grammar")
"""Every convention, best first: native choice/regex before JSON, and a grammar that binds from the first token
last."""

Mode = Literal["auto", "single", "followup", "off"]
"""How a run constrains the answer: auto (the run picks), single (the request itself carries it), followup (a second
turn asks for the answer under it) or off."""
AppliedMode = Literal["single", "followup", "off"]
"""A mode once `auto` is resolved: what a run pins per task and each record's constraint names."""
ConstraintKind = Literal["choice", "regex", "json"]
"""The shape a constraint takes as sent: the choices, a regex (numbers), or a JSON object with an `answer`."""

ReasoningSource = (
    Literal[
        "field:reasoning",
        "field:reasoning_content",
        "field:reasoning_details",
        "inline:paired",
        "inline:close-only",
        "inline:unclosed",
        "channel:harmony",
        "none",
    ]
    | Annotated[str, StringConstraints(pattern=r"^channel:\S+$")]
)
"""Where the reasoning text was found. `channel:<name>` is open to user-defined channel formats (a format file
of kind `channel`), so past the fixed names it is any `channel:` name."""

ProbeVerdict = Literal["enforced", "ignored", "rejected", "inconclusive"]
"""The outcome of one probe check: the endpoint enforced the convention, ignored it, rejected the request, or
the samples could not tell (not the verdict on an answer, which is qualeval.scoring.verdict's)."""


def styles_from_probe(verdicts: Mapping[str, str]) -> list[Style]:
    """The conventions a probe found enforced (its checks are named `style.kind`), best first."""
    found = {mode.partition(".")[0] for mode, verdict in verdicts.items() if verdict == "enforced"}
    return [s for s in STYLES if s in found]


class ModeResult(BaseModel):
    verdict: ProbeVerdict
    detail: str = ""
    samples: list[str] = Field(default_factory=list)
    """The verdict of each sample taken, in order (a starved sample, resent with more tokens, is not one)."""


def contract_of(tool_choice: str | Mapping[str, Any]) -> str:
    """The contract a `tool_choice` value asks for: `auto`, `required`, `none`, or `named` for a function named
    in it (`{"type": "function", "function": {"name": X}}`), whatever the function."""
    return "named" if isinstance(tool_choice, Mapping) else tool_choice


class ToolContract(BaseModel):
    """One `tool_choice` contract as the probe checked it (qualeval.run.probetools): `auto` may call or not,
    `required` gives at least one call ending `finish_reason: "tool_calls"`, `none` gives no call, a named function
    is the one called."""

    tool_choice: str | dict[str, Any]
    """As sent: `auto`, `required`, `none`, or `{"type": "function", "function": {"name": ...}}`."""
    thinking: bool | None = None
    """Thinking on or off through the switch the probe found working; None: no switch worked, the server's
    default."""
    effort: str | None = None
    """The reasoning effort sent (thinking on only); None: none sent."""
    held: bool | None = None
    """None: no verdict (no reply said anything, the probe's time ran out, a reply cut off while thinking)."""
    seen: str = ""
    """What came back, in one line."""

    @property
    def contract(self) -> str:
        return contract_of(self.tool_choice)

    def where(self) -> str:
        """`thinking off, effort none`: the conditions it was checked under."""
        thinking = "server default" if self.thinking is None else "on" if self.thinking else "off"
        return f"thinking {thinking}, effort {self.effort or 'none'}"

    def line(self) -> str:
        """One line: what was asked, under what, and what came back."""
        choice = self.tool_choice
        named = f"function {choice.get('function', {}).get('name')}" if isinstance(choice, dict) else choice
        return f"tool_choice {named} ({self.where()}): {self.seen}"


class ProbeResult(BaseModel):
    base_url: str
    model: str
    simulated: bool
    served_models: list[str] = Field(default_factory=list)
    reasoning_source: ReasoningSource = "none"
    """Where reasoning came from without streaming: a field, inline markers, or none."""
    reasoning_fields: list[str] = Field(default_factory=list)
    """Every reasoning field seen, non-stream and stream (two means the same text is sent twice)."""
    stream_reasoning_source: ReasoningSource = "none"
    streaming_usage: bool | None = None
    """The stream's usage is the server's count; None: no streamed request finished to say (`streaming usage`
    is then in `inconclusive`)."""
    reasoning_tokens_reported: bool | None = None
    """The server counts reasoning tokens; None: no request finished to say (`reasoning tokens` in `inconclusive`)."""
    hidden_reasoning: bool | None = None
    """Reasoning tokens are counted but no reasoning text is returned (OpenAI); None: no request finished to say
    (`hidden reasoning` in `inconclusive`)."""
    thinking_switch: dict[str, str] = Field(default_factory=dict)
    """Each convention for turning thinking off, and whether the endpoint obeyed it: `works`, `ignored (still
    reasons)`, `no reasoning seen either way`, `rejected: ...` or `inconclusive: ...`."""
    budget: int = BUDGET
    seed: int = SEED
    structured_outputs: dict[str, ModeResult] = Field(default_factory=dict)
    seconds: float = PROBE_TIME
    """The probe's time budget."""
    inconclusive: list[str] = Field(default_factory=list)
    """The checks that could not conclude (out of time, no answer, no stable verdict), by name: `reasoning` and
    `stream reasoning` (no complete response, or one cut off with nothing marked), `streaming usage`, `reasoning
    tokens` and `hidden reasoning` (None above), `thinking switch NAME`, and the structured-output checks
    (`guided.json`...)."""
    notes: list[str] = Field(default_factory=list)
    tool_contracts: list[ToolContract] | None = None
    """Each `tool_choice` contract checked, per thinking setting and effort; None: not checked (a plain `qualeval
    probe`, or a run with no tool task), which is never "held"."""
    passback: list[PassbackCheck] | None = None
    """The same second turn with the earlier reasoning sent back each way, and what the server did with each
    (`qualeval probe --passback`); None: not checked."""
    failed: str | None = None
    """Why no check could conclude when every chat request of the probe failed at the endpoint (its error); None
    when the endpoint answered: an inconclusive check is then one the time, or the answers, left open."""

    def styles(self) -> list[Style]:
        """The structured-output conventions found enforced, best first."""
        return styles_from_probe({mode: check.verdict for mode, check in self.structured_outputs.items()})

    def broken(self) -> list[ToolContract]:
        """The tool_choice contracts found broken (never the unchecked or inconclusive ones)."""
        return [c for c in self.tool_contracts or () if c.held is False]


_PREFERRED: tuple[Passback, ...] = ("reasoning_content", "reasoning", "inline")
"""A field the server reads before the content: inline text in an answer is a template's to parse or not."""


def passback_found(result: ProbeResult | None) -> Passback | None:
    """Where a run's `--reasoning-passback auto` sends earlier reasoning: the first the probe found the server
    consumes (`reasoning_content`, `reasoning`, then `inline`); `none` when it checked every way and the server
    consumed none; None when the probe did not check, or could not tell (a variant inconclusive)."""
    checks = {c.sent: c for c in (result.passback if result is not None else None) or ()}
    if not checks:
        return None
    for field in _PREFERRED:
        if field in checks and checks[field].verdict == "consumed":
            return field
    if any(c.verdict == "inconclusive" for c in checks.values()):
        return None
    return "none"
