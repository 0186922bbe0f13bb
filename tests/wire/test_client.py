"""How a ChatRequest becomes a JSON body for reasoning servers."""

from __future__ import annotations

import pytest

from qualeval.records import ClientConfig
from qualeval.wire.client import build_body
from tests.conftest import ask

CFG = ClientConfig(base_url="http://x/v1", api_key=None)


def test_stream_asks_for_usage_and_thinking_is_a_json_boolean() -> None:
    body = build_body(ask("q", thinking=False, max_tokens=64, seed=3, temperature=0.0), CFG)
    assert body["stream_options"] == {"include_usage": True}
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["max_tokens"] == 64 and body["seed"] == 3 and body["temperature"] == 0.0


def test_stop_strings_are_not_sent_to_a_thinking_model() -> None:
    assert "stop" not in build_body(ask("q", stop=("\n\n",)), CFG)
    assert "stop" not in build_body(ask("q", stop=("\n\n",), thinking=True), CFG)
    assert build_body(ask("q", stop=("\n\n",), thinking=False), CFG)["stop"] == ["\n\n"]


@pytest.mark.parametrize(
    ("switch", "key", "value"),
    [
        ("reasoning_effort", "reasoning_effort", "none"),
        ("deepseek", "thinking", {"type": "disabled"}),
    ],
)
def test_other_thinking_switches(switch: str, key: str, value: object) -> None:
    cfg = CFG.model_copy(update={"thinking_switch": switch})
    body = build_body(ask("q", thinking=False), cfg)
    assert body[key] == value and "chat_template_kwargs" not in body


def test_max_completion_tokens_and_extra_body_last() -> None:
    cfg = CFG.model_copy(update={"max_tokens_field": "max_completion_tokens"})
    body = build_body(
        ask(
            "q",
            max_tokens=9,
            stream=False,
            extra_body={"structured_outputs": {"choice": ["a"]}},
            chat_template_kwargs={"foo": 1},
        ),
        cfg,
    )
    assert body["max_completion_tokens"] == 9 and "max_tokens" not in body and "stream" not in body
    assert body["structured_outputs"] == {"choice": ["a"]} and body["chat_template_kwargs"] == {"foo": 1}


def test_environment_conventions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1234/v1/")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    cfg = ClientConfig()
    assert cfg.base_url == "http://127.0.0.1:1234/v1"
    assert cfg.api_key is not None and cfg.api_key.get_secret_value() == "sk-env"
    assert "sk-env" not in repr(cfg) and "sk-env" not in cfg.model_dump_json()
