"""The tool-call parts of a sample: the tools it offers (OpenAI function tools, converted from BFCL's function
documents where the task says so), its tool_choice, its expected calls (ToolAnswer) with a readable gold, and the
chat messages a document holds itself (BFCL's `question`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from qualeval.errors import InputError
from qualeval.records import ExpectedCall, NamedToolChoice, ToolAnswer, tool_problem
from qualeval.tasks.bfcl_schema import openai_name, openai_tools
from qualeval.tasks.prompts import warn_once
from qualeval.tasks.task import Task
from qualeval.tasks.templates import Value, compile_value
from qualeval.tasks.toolvalues import gold_problem
from qualeval.wire import Message

__all__ = ["ToolKeys", "ToolParts", "compile_tool_keys", "gold_of", "warn_unwinnable"]

_TRIGGERS = ("call", "none", "any")


@dataclass(frozen=True, slots=True)
class ToolParts:
    """What a document's tool keys give its sample: fields of the Sample, and its expected calls."""

    answer: ToolAnswer | None
    gold: str
    overrides: dict[str, Any]


def _value_repr(value: Any) -> str:
    return repr(value) if not isinstance(value, bool) else str(value)


def gold_of(answer: ToolAnswer) -> str:
    """The expected calls as one readable line (`get_weather(city='Paris')`, each parameter's first acceptable
    value, an optional one left out where "" is its only value); `no call` / `any call` for the other triggers."""
    if answer.trigger != "call":
        return "no call" if answer.trigger == "none" else "any call"
    calls = []
    for call in answer.calls:
        args = []
        for param, values in call.params.items():
            shown = next((v for v in values if v != ""), None)
            if shown is not None:
                args.append(f"{param}={_value_repr(shown)}")
        calls.append(f"{call.name}({', '.join(args)})")
    return "; ".join(calls)


def _optional(value: Value | None, fields: dict[str, Any], item: str) -> Any:
    """A key's value, or None where it names a field this document does not have (an item without calls)."""
    if value is None or (value.field is not None and value.field.split(".")[0] not in fields):
        return None
    return value(fields, item)


@dataclass(frozen=True, slots=True)
class ToolKeys:
    task: Task
    messages: Value | None
    tools: Value | None
    calls: Value | None
    trigger: Value | None
    unwinnable: list[str] = field(default_factory=list)
    """Items of published data whose expected calls no call can satisfy (`item: why`), warned about, not refused."""

    def _where(self, key: str, item: str) -> str:
        return f"{self.task.where}: field '{key}': {item}"

    def __call__(self, fields: dict[str, Any], item: str) -> ToolParts:
        spec = self.task.spec
        out: dict[str, Any] = {}
        if self.messages is not None:
            messages = self._messages(self.messages(fields, item), item)
            out["messages"] = messages
            out["question"] = next((m.content for m in reversed(messages) if m.role == "user"), "")
        tools = self._tools(fields, item)
        if tools:
            out["tools"] = tools
        names = [t["function"]["name"] for t in tools]
        if spec.tool_choice is not None:
            out["tool_choice"] = self._choice(names, item)
        answer = self._answer(fields, names, item)
        if answer is not None:
            self._check_gold(answer, tools, item)
            self._check_choice(answer, item)
            out["tool_answer"] = answer
        return ToolParts(answer, gold_of(answer) if answer else "", out)

    def _messages(self, raw: Any, item: str) -> tuple[Message, ...]:
        where = self._where("doc_to_messages", item)
        if isinstance(raw, list) and raw and all(isinstance(turn, list) for turn in raw):
            if len(raw) > 1:  # BFCL's multi-turn items need the calls executed between turns
                raise InputError(f"{where}: {len(raw)} turns; only single-turn items can be sent")
            raw = raw[0]
        if not isinstance(raw, list) or not raw:
            raise InputError(f"{where}: expected a non-empty list of chat messages")
        out = []
        for message in raw:
            role = message.get("role") if isinstance(message, dict) else None
            content = message.get("content") if isinstance(message, dict) else None
            if role not in ("system", "user", "assistant") or not isinstance(content, str):
                raise InputError(f"{where}: a message must be {{role: system|user|assistant, content: text}}")
            out.append(Message(role=role, content=content))
        return tuple(out)

    def _tools(self, fields: dict[str, Any], item: str) -> tuple[dict[str, Any], ...]:
        spec = self.task.spec
        key = "tools" if spec.tools else "doc_to_tools"
        where = self._where(key, item)
        raw: Any = list(spec.tools) if spec.tools else self.tools(fields, item) if self.tools else []
        if not isinstance(raw, list):
            raise InputError(f"{where}: expected a list of tools, got {type(raw).__name__}")
        if spec.tool_format == "bfcl":
            bad = next((d for d in raw if not (isinstance(d, dict) and isinstance(d.get("name"), str))), None)
            if bad is not None:
                raise InputError(f"{where}: a BFCL function document needs a name: {str(bad)[:60]}")
            raw = list(openai_tools(raw))
        seen: set[str] = set()
        for tool in raw:
            if (problem := tool_problem(tool)) is not None:
                raise InputError(f"{where}: {problem}")
            name = tool["function"]["name"]
            if name in seen:
                raise InputError(f"{where}: two tools are named '{name}'")
            seen.add(name)
        return tuple(raw)

    def _check_gold(self, answer: ToolAnswer, tools: tuple[dict[str, Any], ...], item: str) -> None:
        """Expected calls that contradict their tool's schema make an item no model can win (or one the scorer
        counts right beside a schema violation): an error in a task's own items; in BFCL's form (tool_format bfcl,
        judged by BFCL's rules, whose published answers list values of other types on purpose), only an item no
        call can satisfy is noted, and the task warns of them."""
        task = self.task
        published = task.spec.tool_format == "bfcl"
        functions = {t["function"]["name"]: t["function"] for t in tools}
        for call in answer.calls:
            problem = gold_problem(call, functions[call.name], strict=not published)
            if problem is None:
                continue
            if not published:
                raise InputError(f"{self._where('doc_to_calls', item)}: expected call {call.name}: {problem}")
            self.unwinnable.append(f"{item}: {call.name}: {problem}")
            return

    def _check_choice(self, answer: ToolAnswer, item: str) -> None:
        """A tool_choice that forbids what the item expects (none where a call is expected, required where none
        is, a named function where another call or no call is) leaves the model no right answer."""
        choice = self.task.spec.tool_choice
        wants = "a call" if answer.trigger == "any" else "no call"
        if answer.trigger == "call":
            wants = f"a call of {', '.join(dict.fromkeys(c.name for c in answer.calls))}"
        if isinstance(choice, NamedToolChoice):
            named = choice.function.name
            if answer.trigger == "none" or any(c.name != named for c in answer.calls):
                said = f"tool_choice names {named}"
            else:
                return
        elif (choice == "none" and answer.trigger != "none") or (choice == "required" and answer.trigger == "none"):
            said = f"tool_choice '{choice}'"
        else:
            return
        raise InputError(f"{self._where('tool_choice', item)}: {said}, but the item expects {wants}")

    def _choice(self, names: list[str], item: str) -> str | dict[str, Any]:
        choice = self.task.spec.tool_choice
        if isinstance(choice, NamedToolChoice):
            if choice.function.name not in names:
                raise InputError(
                    f"{self._where('tool_choice', item)}: names '{choice.function.name}', not a tool of the item"
                )
            return choice.model_dump()
        return str(choice)

    def _trigger(self, fields: dict[str, Any], item: str, calls: Any) -> str | None:
        trigger = self.task.spec.trigger or _optional(self.trigger, fields, item)
        if trigger is None:
            return "call" if calls is not None else None
        if trigger not in _TRIGGERS:
            raise InputError(f"{self._where('doc_to_trigger', item)}: '{trigger}' is not call, none or any")
        return str(trigger)

    def _answer(self, fields: dict[str, Any], names: list[str], item: str) -> ToolAnswer | None:
        raw = _optional(self.calls, fields, item)
        trigger = self._trigger(fields, item, raw)
        if trigger is None:
            if self.task.spec.scorer.kind == "tool_call":
                raise InputError(f"{self._where('doc_to_calls', item)}: no expected calls and no trigger")
            return None
        calls = self._calls(raw, names, item) if raw is not None else ()
        if trigger == "call" and not calls:
            raise InputError(f"{self._where('doc_to_calls', item)}: trigger 'call' needs the expected calls")
        if trigger == "none" and calls:
            raise InputError(f"{self._where('doc_to_calls', item)}: expected calls where the trigger is 'none'")
        return ToolAnswer(trigger=trigger, calls=calls)

    def _calls(self, raw: Any, names: list[str], item: str) -> tuple[ExpectedCall, ...]:
        """BFCL's possible-answer form: [{name: {param: [acceptable values]}}], one mapping per call."""
        where = self._where("doc_to_calls", item)
        form = "expected calls are [{name: {param: [acceptable values]}}]"
        if not isinstance(raw, list):
            raise InputError(f"{where}: {form}, got {type(raw).__name__}")
        out = []
        for call in raw:
            if not (isinstance(call, dict) and len(call) == 1 and isinstance(next(iter(call.values())), dict)):
                raise InputError(f"{where}: {form}, got {str(call)[:60]}")
            [(name, params)] = call.items()
            name = openai_name(str(name)) if self.task.spec.tool_format == "bfcl" else str(name)
            if name not in names:
                raise InputError(f"{where}: expected call '{name}' is not a tool of the item ({', '.join(names)})")
            bad = next((p for p, v in params.items() if not isinstance(v, list)), None)
            if bad is not None:
                raise InputError(f"{where}: {name}.{bad}: acceptable values must be a list (`{bad}: [value]`)")
            out.append(ExpectedCall(name=name, params={p: tuple(v) for p, v in params.items()}))
        return tuple(out)


def compile_tool_keys(task: Task) -> ToolKeys | None:
    """The task's tool keys compiled once; None for a task without any."""
    spec = task.spec
    keys = (spec.doc_to_messages, spec.doc_to_tools, spec.doc_to_calls, spec.doc_to_trigger)
    if not any(keys) and not (spec.tools or spec.trigger or spec.tool_choice):
        return None

    def value(name: str, source: str | None) -> Value | None:
        return compile_value(source, f"{task.where}: field '{name}'") if source else None

    return ToolKeys(
        task,
        value("doc_to_messages", spec.doc_to_messages),
        value("doc_to_tools", spec.doc_to_tools),
        value("doc_to_calls", spec.doc_to_calls),
        value("doc_to_trigger", spec.doc_to_trigger),
    )


def warn_unwinnable(keys: ToolKeys | None) -> None:
    """One warning for a task's published items that no call can satisfy: they count wrong whatever is sent."""
    if keys is None or not keys.unwinnable:
        return
    task, found = keys.task, keys.unwinnable
    warn_once(
        f"unwinnable:{task.name}",
        f"{task.where}: {len(found)} item(s) expect a call that their own tool schema rules out, so no call counts "
        f"right (the data's, kept as published): {'; '.join(found[:3])}" + (" ..." if len(found) > 3 else ""),
    )
