"""llama-server's `/props`: the server's settings, in the field order b11434 sends them. The values are the
reference server's own (its template, its context size); sampler defaults are llama.cpp's."""

from __future__ import annotations

from typing import Any

from qualeval.sim.flavours.llamacpp import FINGERPRINT

__all__ = ["TEMPLATE", "props"]

# the Jinja template that `llamacpp.render` implements, shown as /props shows a model's template
TEMPLATE = (
    "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' }}"
    "{%- if message.reasoning_content %}{{- '<think>\\n' + message.reasoning_content + '\\n</think>\\n\\n' }}"
    "{%- endif %}"
    "{{- message.content }}{%- for call in message.tool_calls or [] %}{{- '\\n<tool_call>\\n' + "
    "{'name': call.function.name, 'arguments': call.function.arguments} | tojson + '\\n</tool_call>' }}{%- endfor %}"
    "{{- '<|im_end|>\\n' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}"
    "{%- elif template_opens_thinking %}{{- '<think>\\n' }}{%- endif %}{%- endif %}"
)

_SAMPLING: dict[str, Any] = {
    "seed": 4294967295,
    "temperature": 0.8,
    "dynatemp_range": 0.0,
    "dynatemp_exponent": 1.0,
    "top_k": 40,
    "top_p": 0.95,
    "min_p": 0.05,
    "top_n_sigma": -1.0,
    "xtc_probability": 0.0,
    "xtc_threshold": 0.1,
    "typical_p": 1.0,
    "repeat_last_n": 64,
    "repeat_penalty": 1.0,
    "presence_penalty": 0.0,
    "frequency_penalty": 0.0,
    "dry_multiplier": 0.0,
    "dry_base": 1.75,
    "dry_allowed_length": 2,
    "dry_penalty_last_n": 64,
    "mirostat": 0,
    "mirostat_tau": 5.0,
    "mirostat_eta": 0.1,
    "adaptive_target": -1.0,
    "adaptive_decay": 0.9,
    "max_tokens": -1,
    "n_predict": -1,
    "n_keep": 0,
    "n_discard": 0,
    "ignore_eos": False,
    "stream": False,
    "n_probs": 0,
    "min_keep": 0,
    "chat_format": "Content-only",
    "reasoning_format": "none",
    "reasoning_in_content": False,
    "generation_prompt": "",
    "samplers": ["penalties", "dry", "top_n_sigma", "top_k", "typ_p", "top_p", "min_p", "xtc", "temperature"],
    "speculative.types": "none",
    "timings_per_token": False,
    "post_sampling_probs": False,
    "backend_sampling": False,
    "lora": [],
}

_CAPS = {
    "supports_object_arguments": False,
    "supports_parallel_tool_calls": False,
    "supports_preserve_reasoning": False,
    "supports_reasoning_effort": False,
    "supports_string_content": True,
    "supports_system_role": True,
    "supports_tool_calls": False,
    "supports_tools": False,
    "supports_typed_content": False,
}


def props(config: Any) -> dict[str, Any]:
    return {
        "default_generation_settings": {"params": dict(_SAMPLING), "n_ctx": config.max_model_len},
        "total_slots": 4,
        "model_alias": config.model,
        "model_ftype": "simulated",
        "model_path": f"{config.model}.gguf",
        "modalities": {"vision": False, "video": False, "audio": False},
        "media_marker": "<__media_qualeval_simulated__>",
        "endpoint_slots": True,
        "endpoint_props": False,
        "endpoint_metrics": False,
        "ui": False,
        "ui_settings": {},
        "chat_template": TEMPLATE,
        "chat_template_caps": dict(_CAPS),
        "bos_token": "<|endoftext|>",
        "eos_token": "<|im_end|>",
        "build_info": FINGERPRINT,
        "is_sleeping": False,
        "cors_proxy_enabled": False,
    }
