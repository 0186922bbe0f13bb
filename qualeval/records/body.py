"""The JSON body a request sent, as records.jsonl keeps it: the keys qualeval writes are typed, any other key (a
server's own: chat_template_kwargs, response_format, structured_outputs, thinking_token_budget...) is kept as it
came, and the body is written back as it was sent: the keys that were set, in the order they came."""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    ModelWrapValidatorHandler,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

__all__ = ["SentBody", "SentMessage"]


class _AsSent(BaseModel):
    """A JSON object written back byte for byte: no key added (defaults are not padded in), none reordered."""

    model_config = ConfigDict(extra="allow")  # a server-specific key is the declared extension point

    _order: tuple[str, ...] = PrivateAttr(default=())
    """The keys in the order they came: pydantic would write fields in declaration order, then the extras."""

    @model_validator(mode="wrap")
    @classmethod
    def _keep_order(cls, data: Any, handler: ModelWrapValidatorHandler[_AsSent]) -> _AsSent:
        made = handler(data)
        if isinstance(data, dict):
            made._order = tuple(data)
        return made

    @model_serializer(mode="wrap")
    def _as_sent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        given = self.model_fields_set | set(self.model_extra or ())
        # a key set after validation (model_copy(update=...)) follows the ones that came
        return {k: dumped[k] for k in dict.fromkeys([*self._order, *dumped]) if k in given and k in dumped}


class SentMessage(_AsSent):
    """One chat message as sent; keys beyond role and content (name, tool_calls...) are kept."""

    role: str
    content: str | list[dict[str, JsonValue]] | None = None
    """Text, or a list of content parts (`{"type": "text", ...}`), or null (an assistant turn of tool calls)."""


class SentBody(_AsSent):
    """The body of one chat request (qualeval.wire.client.build_body), never the API key. An unset key is not
    sent: `{}` is the body of offline scoring, which sends nothing."""

    model: str = ""
    messages: list[SentMessage] = Field(default_factory=list)
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    """The budget, under the key the endpoint wants (ClientConfig.max_tokens_field)."""
    # `float | int`: a 0 sent as an int is written back as 0, not 0.0
    temperature: float | int | None = None
    top_p: float | int | None = None
    top_k: int | None = None
    min_p: float | int | None = None
    presence_penalty: float | int | None = None
    seed: int | None = None
    n: int | None = None
    reasoning_effort: str | None = None
    stop: str | list[str] | None = None
    stream: bool | None = None
    stream_options: dict[str, JsonValue] | None = None

    def as_sent(self) -> dict[str, Any]:
        """The body as a JSON-ready dict, exactly as it was sent (to send it again, or to read a server's key)."""
        return self.model_dump(mode="json")

    def budget(self) -> int | None:
        """The token budget the request allowed, under whichever key carried it."""
        return self.max_tokens or self.max_completion_tokens

    def prompt(self) -> str | None:
        """The last user message: the question as the model saw it."""
        users = [m for m in self.messages if m.role == "user"]
        return str(users[-1].content or "") if users else None
