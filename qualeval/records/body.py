"""The JSON body a request sent, as records.jsonl keeps it: the keys qualeval writes are typed, any other key (a
server's own: chat_template_kwargs, response_format, structured_outputs, thinking_token_budget...) is kept as it
came, and the body is written back as it was sent: a key it did not send is never padded in as null (the keys may
come back in another order, which changes nothing a JSON reader sees)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue

__all__ = ["SentBody", "SentMessage"]


def _unsent(value: object) -> bool:
    return value is None or value == "" or value == []


def _sent_if_set(default: object = None) -> Any:
    """A typed key written only when the body had it: declared per field, so that writing a record needs no
    serializer of its own (100,000 records are written and read back per large run)."""
    return Field(default, exclude_if=_unsent)


class SentMessage(BaseModel):
    """One chat message as sent; keys beyond role and content (name, tool_calls...) are kept."""

    model_config = ConfigDict(extra="allow")

    role: str
    content: str | list[dict[str, JsonValue]] | None
    """Text, or a list of content parts (`{"type": "text", ...}`), or null (an assistant turn of tool calls)."""


class SentBody(BaseModel):
    """The body of one chat request (qualeval.wire.client.build_body), never the API key. An unset key is not
    sent: `{}` is the body of offline scoring, which sends nothing."""

    model_config = ConfigDict(extra="allow")  # a server-specific key is the declared extension point

    model: str = _sent_if_set("")
    messages: list[SentMessage] = Field(default_factory=list, exclude_if=_unsent)
    max_tokens: int | None = _sent_if_set()
    max_completion_tokens: int | None = _sent_if_set()
    """The budget, under the key the endpoint wants (ClientConfig.max_tokens_field)."""
    # `float | int`: a 0 sent as an int is written back as 0, not 0.0
    temperature: float | int | None = _sent_if_set()
    top_p: float | int | None = _sent_if_set()
    top_k: int | None = _sent_if_set()
    min_p: float | int | None = _sent_if_set()
    presence_penalty: float | int | None = _sent_if_set()
    seed: int | None = _sent_if_set()
    n: int | None = _sent_if_set()
    reasoning_effort: str | None = _sent_if_set()
    stop: str | list[str] | None = _sent_if_set()
    stream: bool | None = _sent_if_set()
    stream_options: dict[str, JsonValue] | None = _sent_if_set()

    def budget(self) -> int | None:
        """The token budget the request allowed, under whichever key carried it."""
        return self.max_tokens or self.max_completion_tokens

    def prompt(self) -> str | None:
        """The last user message: the question as the model saw it."""
        users = [m for m in self.messages if m.role == "user"]
        return str(users[-1].content or "") if users else None
