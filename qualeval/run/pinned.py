"""What a run decides once and keeps: the constraint mode and convention, the thinking switch, and whether the
chat template opens the thinking block.

They are resolved before the first request, from the flags and the probe's measured verdicts, written to the
manifest (`pinned`) and folded into its fingerprint. A resumed run reuses them whatever the probe would say now,
or whether it runs at all (`--no-probe`), so one run never mixes constrained and unconstrained records, or two
ways of switching thinking off. A request that cannot be honoured is an InputError (exit 2) before any request.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from qualeval.errors import InputError
from qualeval.records import Manifest, Pinned, ProbeResult, RunConfig, Style, ThinkingSwitch
from qualeval.run.pipeline import resolve_mode
from qualeval.wire import THINKING_SWITCHES

__all__ = ["SETTINGS_EXCLUDED", "refuse_conflicts", "resolve", "resolve_opened", "resolve_switch", "unseparated"]

SETTINGS_EXCLUDED = frozenset(
    {"out", "concurrency", "timeout", "max_retries", "fail_under", "allow_code_execution", "published"}
    | {"probe", "probe_time"}  # a resumed run is not probed again
    | {"endpoints"}  # replicas of the same model may come and go between sessions
)
"""Options that may change between the sessions of one run: everything else is part of its fingerprint."""


def unseparated(found: ProbeResult | None) -> str | None:
    """Where the reasoning went when the server does not return it apart from the answer (inline tags, a channel,
    or no reasoning seen at all); None when it does (a reasoning field, or hidden reasoning that is counted), or
    when there was no probe."""
    if found is None or found.reasoning_source.startswith("field:") or found.hidden_reasoning:
        return None
    return found.reasoning_source


def resolve_opened(config: RunConfig, found: ProbeResult | None) -> tuple[bool, str | None]:
    """Whether to split as `--thinking-opened` though the flag was not given, and a note: the probe saw only a
    closing marker on the transport the run uses (streaming or not). Where it saw one on the other transport and no
    marker at all on this one, the server drops the marker there (vLLM's qwen3 parser <= 0.16 streaming): thinking
    and answer cannot be told apart, which is an InputError rather than a guess.

    The probe has one reply per transport: the note says which replies the reading rests on, and a reply on the
    other transport that shows the model's own opening marker or a reasoning field contradicts it, so nothing is
    applied. The user's word wins: `--no-thinking-opened` (or `thinking_opened: false` in a profile) is never
    overridden by the probe."""
    if config.thinking_opened or "thinking_opened" in config.model_fields_set or found is None:
        return False, None
    here, there = found.stream_reasoning_source, found.reasoning_source
    way, other = ("streamed", "non-streamed") if config.stream else ("non-streamed", "streamed")
    if not config.stream:
        here, there = there, here
    if here == "inline:close-only":
        if there not in ("inline:close-only", "none"):  # the model's own <think>, or a field: no template opened it
            return False, (
                f"--thinking-opened not applied: the probe's {way} reply showed only a closing thinking marker, but "
                f"its {other} reply showed {there}; give --thinking-opened if the chat template opens the block"
            )
        rests = (
            "both probe replies (streamed and not) showed"
            if there == "inline:close-only"
            else f"the probe's one {way} reply showed (its {other} reply no marker)"
        )
        return True, (
            f"--thinking-opened applied: {rests} only a closing thinking marker (inline:close-only), so the chat "
            "template opens the block; a response without that marker is thinking cut off, never an answer "
            "(--no-thinking-opened if it is not)"
        )
    unsure = ("stream reasoning" if config.stream else "reasoning") in found.inconclusive  # cut off, not dropped
    if there == "inline:close-only" and here == "none" and not unsure:
        way, other = ("when streaming", "--no-stream") if config.stream else ("without streaming", "--stream")
        raise InputError(
            f"--thinking-opened: the probe saw the chat template open the thinking (only a closing marker comes "
            f"back) but no marker at all {way}: thinking and answer cannot be told apart there; run with {other}"
        )
    return False, None


def _working(found: ProbeResult | None) -> ThinkingSwitch | None:
    """The first thinking switch the probe saw work, in order of preference."""
    verdicts = found.thinking_switch if found else {}
    return next((switch for switch in THINKING_SWITCHES if verdicts.get(switch) == "works"), None)


def resolve_switch(
    forced: Literal["auto"] | ThinkingSwitch, found: ProbeResult | None, wanted: bool | None
) -> tuple[ThinkingSwitch, str | None]:
    """The thinking switch to send and a note: forced, or the first convention the probe saw work."""
    if forced != "auto":
        return forced, None
    if wanted is None:
        return "none", None  # thinking is left to the server: nothing to send
    flag = "--thinking" if wanted else "--no-thinking"
    if found is None:
        raise InputError(
            f"{flag}: with --no-probe it is unknown which thinking switch this endpoint obeys; "
            "force one with --thinking-switch chat_template_kwargs|reasoning_effort|deepseek|none"
        )
    verdicts = found.thinking_switch
    if (working := _working(found)) is not None:
        return working, None
    if verdicts and all(v == "no reasoning seen either way" for v in verdicts.values()):
        return "none", f"{flag}: the probe saw no reasoning either way, so no thinking switch is sent"
    seen = ", ".join(f"{name} {v.split(':')[0]}" for name, v in verdicts.items()) or "nothing tried"
    if verdicts and all(v.startswith("inconclusive") for v in verdicts.values()):
        why = f"the probe could not tell which thinking switch this endpoint obeys ({seen})"
        if wanted:
            return "none", f"--thinking: {why}; the server's default applies"
        # a guess could leave thinking on under a figure that says off: give the probe time, or name the switch
        raise InputError(f"--no-thinking: {why}; give it more --probe-time, or force one with --thinking-switch NAME")
    if wanted:
        return "none", f"--thinking: no thinking switch worked here ({seen}); the server's default applies"
    raise InputError(
        f"--no-thinking: no thinking switch worked on this endpoint ({seen}); force one with --thinking-switch NAME"
    )


def resolve(
    config: RunConfig, found: ProbeResult | None, wanted: bool | None, bare: dict[str, bool] | None = None
) -> Pinned:
    """A new run's constraint mode, convention and thinking switch. `wanted`: the thinking value to be sent;
    `bare`: per task, whether its prompt asks for the answer alone (a constraint may then bind from the first
    token)."""
    if config.constraint_style:
        styles: list[Style] = [config.constraint_style]
        unknown = ""
    else:
        styles = found.styles() if found else []
        unknown = _none_enforced(found)
    inline = unseparated(found)
    if found is None and wanted is not True:  # without a probe, a reasoning channel is known only when asked for
        inline = "unknown: --no-probe"

    def mode_of(is_bare: bool) -> tuple[str, Style | None, str | None]:
        return resolve_mode(config.constraint, styles, inline=inline, thinking=wanted, bare=is_bare, unknown=unknown)

    flags = bare or {}
    mode, style, note = mode_of(bool(flags) and all(flags.values()))  # the run's mode, and the tasks that differ
    tasks, notes = {}, [note] if note else []
    for name, is_bare in flags.items():
        own, own_style, own_note = mode_of(is_bare)
        if own != mode:
            tasks[name] = own
            notes.append(f"{name}: {own_note}")
        style = style or own_style
    opened, seen = resolve_opened(config, found)
    notes += [seen] if seen else []
    if found is not None and found.failed:  # not the time: the endpoint answered none of the probe's requests
        notes.append(
            f"probe: every request failed at the endpoint ({found.failed.removeprefix('probe: ')}), so it learnt "
            "nothing; the run goes on with the defaults (its own requests will show what the endpoint does)"
        )
    elif found is not None and found.inconclusive:
        notes.append(
            f"probe: inconclusive (it had {found.seconds:g}s): {'; '.join(found.inconclusive)}; the run goes on with "
            "the defaults for those"
        )
    switch, why = resolve_switch(config.thinking_switch, found, wanted)
    if "followup" in (mode, *tasks.values()) and wanted is None and config.thinking_switch == "auto":
        switch = _working(found) or "none"  # the followup asks with thinking off: it needs the switch
    if config.thinking_pair and switch == "none":
        # both levels would send the very same request: thinking=on against thinking=off would compare nothing
        said = why.partition(": ")[2] if why else "--thinking-switch none sends no switch"
        raise InputError(
            f"--thinking-pair: {said}; both levels would send the same request and compare nothing: "
            "drop --thinking-pair, or force a switch the server obeys with --thinking-switch NAME"
        )
    notes += [why] if why else []
    return Pinned(
        constraint=mode,
        constraint_style=style,
        tasks=tasks,
        thinking_switch=switch,
        thinking_opened=opened,
        notes=notes,
    )


def _none_enforced(found: ProbeResult | None) -> str:
    """Why there is no structured-output convention to use."""
    if found is None:
        return "the probe is off: --no-probe"
    if found.failed:
        return "the probe got no answer: its every request failed at the endpoint"
    unsettled = [mode for mode in found.structured_outputs if mode in found.inconclusive]
    return (
        f"the probe found none enforced; {len(unsettled)} checks were inconclusive"
        if unsettled
        else ("the probe found none enforced")
    )


def _pin_of(key: str, pinned: Pinned | None) -> str:
    if pinned is None:
        return ""
    if key in ("constraint", "constraint_style"):
        via = f" via {pinned.constraint_style}" if pinned.constraint_style else ""
        return f" (pinned: {pinned.constraint}{via})"
    if key in ("thinking", "thinking_switch"):
        return f" (pinned switch: {pinned.thinking_switch})"
    return ""


def refuse_conflicts(root: Path, old: Manifest, config: RunConfig) -> None:
    """A resumed run keeps its settings: a flag that now asks for something else is refused, by name."""
    before = old.config.model_dump(mode="json") if old.config else {}
    pinned = old.pinned
    for key, now in config.model_dump(mode="json").items():
        if key in SETTINGS_EXCLUDED or key not in before or before[key] == now:
            continue
        flag = "--task" if key == "tasks" else "--" + key.replace("_", "-")
        raise InputError(
            f"{root}: this run was made with {flag} {_shown(before[key])}{_pin_of(key, pinned)}, not "
            f"{_shown(now)}; resume it with the same flags, or give another --out to start a new run"
        )


def _shown(value: Any) -> str:
    return "unset" if value is None else str(value)
