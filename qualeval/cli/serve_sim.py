"""`qualeval serve-sim`: the reference server from the command line.

Its options are declared once, in SIM_OPTIONS: each names the SimConfig field it sets (or its Behaviour or Latency
part), its help, and its flags where they differ from the field's name. The default is read from the field, so
the command and `SimConfig()` cannot disagree, and the command's signature is built from the table, as `run`'s is
built from RunConfig (qualeval.run.options).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from qualeval.cli import commands
from qualeval.cli.output import fail, note
from qualeval.cli.views import print_flavours
from qualeval.errors import InputError, QualevalError
from qualeval.sim import FAULTS

if TYPE_CHECKING:
    from qualeval.sim import SimConfig, SimServer

__all__ = ["SIM_OPTIONS", "SimOption", "register", "sim_config", "sim_parameters"]


_FROM_FIELD: Any = object()
"""SimOption.default when the field's own default is the flag's (most options)."""


@dataclass(frozen=True, slots=True)
class SimOption:
    """One serve-sim option."""

    target: str
    """The SimConfig field it sets: `port`, or `behaviour.accuracy` / `latency.ttft_ms` for those parts; "" for
    an option that sets none (--list-flavors)."""
    help: str
    flags: tuple[str, ...] = ()
    """Default: the field's name as a flag (`--max-model-len`)."""
    kind: Any = None
    """What the command line reads, when it is not the default's own type (lists, optional values)."""
    default: Any = _FROM_FIELD
    """Only when the command line's default is not the field's (a list for a tuple, text for a mapping)."""
    parse: Callable[[Any], Any] | None = None
    """Turns what was read into the field's value."""
    envvar: str | None = None

    @property
    def name(self) -> str:
        return self.target.rpartition(".")[2] or self.flags[0].lstrip("-").replace("-", "_")


def _task_data(values: list[str] | None) -> dict[str, Path]:
    """`--data PATH` is for every task (`*`), `--data TASK=PATH` for one."""
    return {n if sep else "*": Path(v if sep else n) for n, sep, v in (d.partition("=") for d in values or [])}


def _faults(spec: str) -> dict[str, float]:
    from qualeval.sim import parse_faults

    return parse_faults(spec)


_FAULTS_HELP = (
    f"Random faults per request, e.g. '429=0.05,500=0.03,drop=0.01', tool-parser faults per tool-call item, and "
    f"multi-turn episode faults (see docs/reference-server.md). Names: {' '.join(FAULTS)}."
)

SIM_OPTIONS: tuple[SimOption, ...] = (
    SimOption("flavour", "Wire format to reproduce; --list-flavors shows them.", ("--flavor", "--flavour")),
    SimOption("port", "TCP port; 0 picks a free one."),
    SimOption("host", "Address to bind."),
    SimOption(
        "answers", "JSONL answer key: question and answer fields (GSM8K's `#### N` lines work).", kind=Path | None
    ),
    SimOption(
        "tasks",
        "Use a task's samples as the answer key (a built-in name or a .yaml path); repeatable.",
        ("--task",),
        kind=list[str] | None,
        default=None,
        parse=lambda names: tuple(names or ()),
    ),
    SimOption(
        "task_data",
        "Local data for --task: PATH for every task, or TASK=PATH; repeatable.",
        ("--data",),
        kind=list[str] | None,
        default=None,
        parse=_task_data,
    ),
    SimOption("model", "Model id listed by /v1/models."),
    SimOption("behaviour.accuracy", "Probability of answering a keyed question right."),
    SimOption("behaviour.reasoning_tokens", "Median reasoning length in tokens."),
    SimOption("behaviour.empty_rate", "Probability of finishing with no answer."),
    SimOption("behaviour.trap_rate", "Probability of a distractor number after the answer."),
    SimOption(
        "behaviour.seed",
        "Seed for every simulated choice; a sampled request without a seed of its own also draws anew in each "
        "server process.",
    ),
    SimOption(
        "behaviour.working_harm",
        "Accuracy lost when a constraint binds from the first token on a prompt that asks for working.",
    ),
    SimOption(
        "behaviour.effort_gain",
        "How much a right answer needs its thinking: less than a question needs (low effort, a thinking budget) "
        "costs accuracy by (written / needed) ** gain.",
    ),
    SimOption(
        "behaviour.no_thinking_harm",
        "Share of the accuracy lost when a request switches thinking off (any switch the flavour honours).",
    ),
    SimOption(
        "behaviour.load_harm",
        "Accuracy is multiplied by (1 - X) for each doubling of the requests decoded together (1 in flight: none).",
    ),
    SimOption(
        "behaviour.spec_corrupt",
        "With --spec-draft above 0: share of answers corrupted, each replaced by a wrong one (a speculative-decoding "
        "bug).",
    ),
    SimOption(
        "behaviour.kv_quant_harm",
        "Quantized KV-cache error: an answer after n output tokens is corrupted with chance 1 - exp(-X * n / 1000).",
    ),
    SimOption(
        "behaviour.placeholder_copy",
        "Share of follow-ups answered with a placeholder's template text from the exchange (Answer: <answer>).",
    ),
    SimOption("latency.ttft_ms", "Base time to first token."),
    SimOption("latency.prefill_ms_per_token", "Added to TTFT per prompt token."),
    SimOption("latency.decode_ms", "Interval between tokens of a lone request."),
    SimOption("latency.batch_slowdown", "Share by which each further request in flight stretches the decode interval."),
    SimOption("latency.jitter", "Relative latency jitter, drawn from the seed."),
    SimOption("latency.burst", "No delays at all (client benchmarks)."),
    SimOption("max_running", "Requests decoded at once; others queue (0: no limit)."),
    SimOption("faults", _FAULTS_HELP, kind=str, default="", parse=_faults),
    SimOption(
        "tool_format",
        "Markup the model writes its calls in, seen where a tool fault leaks them into the text: "
        "hermes qwen3_xml kimi_k2 harmony deepseek_v3 deepseek_v31 dsml glm minimax_m2 mistral mistral_json "
        "llama3_json.",
        kind=str | None,
    ),
    SimOption(
        "calls_at_once",
        "A multi-turn episode's turn answered with all its calls in its first step, else one call a step.",
    ),
    SimOption("retry_after", "Retry-After seconds sent with a 429."),
    SimOption(
        "ignore_constraints", "Ignore structured-output parameters, as some vLLM versions do with a reasoning parser."
    ),
    SimOption("ignore_effort", "Ignore reasoning_effort, as a server whose chat template never reads it."),
    SimOption(
        "require_reasoning_content",
        "Answer HTTP 400 to an assistant turn with tool calls sent back without its reasoning_content (DeepSeek "
        "V3.2/V4 in thinking mode).",
    ),
    SimOption("max_model_len", "Context length; longer requests get a 400."),
    SimOption("accuracy_half_tokens", "Accuracy halves every this many prompt tokens (0: the same at every length)."),
    SimOption("spec_draft", "Speculative decoding: draft tokens per step (0: off)."),
    SimOption("spec_accept", "Probability each draft token is accepted."),
    SimOption("kv_tokens", "KV-cache capacity in tokens (the usage gauge of /metrics)."),
    SimOption("log", "Append one JSON line per request: what it received and sent, and when.", kind=Path | None),
    SimOption("api_key", "Require this bearer key (401 otherwise).", kind=str | None, envvar="QUALEVAL_SIM_API_KEY"),
    SimOption("", "List the flavours and exit.", ("--list-flavors", "--list-flavours"), kind=bool, default=False),
)


def _field_default(target: str) -> Any:
    """The default of a SimConfig field, or of a field of its `behaviour` or `latency` part."""
    from qualeval.sim import Behaviour, Latency, SimConfig

    owner, _, name = target.rpartition(".")
    cls = {"": SimConfig, "behaviour": Behaviour, "latency": Latency}[owner]
    found = next(f for f in dataclasses.fields(cls) if f.name == name)
    if found.default is not dataclasses.MISSING:
        return found.default
    assert found.default_factory is not dataclasses.MISSING, name  # every option's field has a default
    return found.default_factory()


def _parameter(option: SimOption) -> inspect.Parameter:
    default = _field_default(option.target) if option.default is _FROM_FIELD else option.default
    kind = option.kind or type(default)
    flag = typer.Option(*option.flags, help=option.help, envvar=option.envvar)
    return inspect.Parameter(
        option.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[kind, flag]
    )


def sim_parameters() -> list[inspect.Parameter]:
    """The serve-sim command's parameters, one per SIM_OPTIONS entry, in its order."""
    return [_parameter(option) for option in SIM_OPTIONS]


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _check(values: dict[str, Any]) -> None:
    """The ranges SimConfig leaves to its caller, each named by its flag: a value outside one would serve
    something other than what the flag says (a negative delay, a context no request fits, a jitter past ±100%)."""
    shares = ("accuracy", "empty_rate", "trap_rate", "spec_accept", "working_harm", "placeholder_copy", "jitter")
    for name in (*shares, "no_thinking_harm", "load_harm", "spec_corrupt"):
        if not 0 <= values[name] <= 1:  # NaN fails every comparison, so it is refused here too
            raise InputError(f"{_flag(name)} must be between 0 and 1, got {values[name]}")
    rates = ("kv_quant_harm", "effort_gain", "ttft_ms", "prefill_ms_per_token", "decode_ms", "batch_slowdown")
    for name in (*rates, "retry_after", "accuracy_half_tokens", "spec_draft", "max_running"):
        if not 0 <= values[name] < float("inf"):
            raise InputError(f"{_flag(name)} must be a finite number of at least 0, got {values[name]}")
    for name in ("reasoning_tokens", "max_model_len", "kv_tokens"):
        if values[name] < 1:
            raise InputError(f"{_flag(name)} must be at least 1, got {values[name]}")
    if not 0 <= values["port"] <= 65535:
        raise InputError(f"--port must be between 0 and 65535, got {values['port']}")
    _inert_harms(values)


def _inert_harms(values: dict[str, Any]) -> None:
    """A harm the chosen flags leave nothing to act on would serve an unharmed model under a harmed name."""
    from qualeval.sim import FLAVOURS

    flavour = FLAVOURS.get(values["flavour"])
    inert = (
        (
            "spec_corrupt",
            not values["spec_draft"],
            "--spec-corrupt needs --spec-draft above 0 (no speculation to corrupt)",
        ),
        (
            "load_harm",
            values["burst"],
            "--load-harm cannot apply with --burst: a request finishes before the next "
            "arrives, so none is ever decoded beside another",
        ),
        (
            "load_harm",
            values["max_running"] == 1,
            "--load-harm cannot apply with --max-running 1: one request is decoded at a time",
        ),
        (
            "no_thinking_harm",
            flavour is not None and not flavour.reasoning,
            f"--no-thinking-harm cannot apply to "
            f"flavour {values['flavour']}: its model does not reason, so there is no thinking to switch off",
        ),
        (
            "working_harm",
            values["ignore_constraints"],
            "--working-harm cannot apply with --ignore-constraints: no constraint ever binds",
        ),
    )
    for flag, applies_not, why in inert:
        if values[flag] and applies_not:
            raise InputError(why)


def sim_config(values: dict[str, Any]) -> SimConfig:
    """The SimConfig the options describe (`values` by option name, as the command receives them)."""
    from qualeval.sim import Behaviour, Latency, SimConfig

    _check(values)
    parts: dict[str, dict[str, Any]] = {"": {}, "behaviour": {}, "latency": {}}
    for option in SIM_OPTIONS:
        if option.target:
            value = values[option.name]
            owner, _, name = option.target.rpartition(".")
            parts[owner][name] = option.parse(value) if option.parse else value
    return SimConfig(**parts[""], behaviour=Behaviour(**parts["behaviour"]), latency=Latency(**parts["latency"]))


def serve_sim(**values: Any) -> None:
    """Run the reference server: a deterministic, SIMULATED OpenAI-compatible reasoning model."""
    if values["list_flavors"]:
        print_flavours()
        return
    try:
        config = sim_config(values)
        commands.run_sim_server(config, _announce)
    except QualevalError as exc:
        fail(exc)
    except KeyboardInterrupt:
        pass


def _announce(server: SimServer, port: int) -> None:
    config = server.config
    source = config.answers or ", ".join(config.tasks)
    items = len(server.key.entries) if server.key else 0
    counts = [f"{n} {word}" for n, word in ((items, "items"), (server.episodes, "episodes")) if n]
    keyed = f", answer key {source} ({', '.join(counts)})" if counts else ""
    print(f"qualeval reference server: SIMULATED model, flavour {config.flavour}{keyed}", flush=True)
    if not counts:
        note(
            "warning: no answer key (--answers FILE or --task NAME): every answer is a refusal, so every "
            "accuracy measured against this server is 0"
        )
    print(f"listening on http://{config.host}:{port}/v1", flush=True)


def register(app: typer.Typer) -> None:
    serve_sim.__signature__ = inspect.Signature(sim_parameters())  # type: ignore[attr-defined]
    app.command("serve-sim", rich_help_panel="Reference server")(serve_sim)
