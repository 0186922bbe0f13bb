"""A tiny GGUF model written with gguf + numpy, for llama-server to serve in the tests.

Llama architecture with random weights (2 layers, n_embd 64): it writes gibberish, so tests shape its output
with GBNF grammars. What matters is everything around the weights, written as Qwen3 ships it:
- a GPT-2 byte-level BPE vocabulary (`tokenizer.ggml.pre = qwen2`): the 256 byte tokens in GPT-2's order,
  a few merges, `<|endoftext|>`, `<|im_start|>`, `<|im_end|>` as CONTROL tokens and `<think>`, `</think>` as
  USER_DEFINED tokens (Qwen's added tokens that are not special), so the server's reasoning parser sees the
  tags as text;
- a Qwen3-style hybrid chat template: `enable_thinking=false` pre-fills an empty think block. The `opened`
  variant's generation prompt ends in `<think>\\n`, like Qwen3-Thinking-2507 or DeepSeek-R1-0528, so the
  model writes only the closing tag.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["SPECIALS", "chat_template", "write_model"]

N_EMBD, N_LAYERS, N_HEAD, N_HEAD_KV, N_FF, N_CTX = 64, 2, 4, 2, 128, 4096
SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>")
# strings that become single tokens through merges (Ġ is GPT-2's space, Ċ its newline)
_WORDS = ("Answer", "ĊĊ", "Ġthe", "ing", "Ġand", "er", "on", "an", "in", "Ġa", "system", "user", "assistant")

_MESSAGES = """\
{%- for message in messages %}
  {%- set content = message.content if message.content is string else '' %}
  {%- if message.role == 'assistant' %}
    {%- set reasoning = message.reasoning_content if message.reasoning_content is string else '' %}
    {%- if not reasoning and '</think>' in content %}
      {%- set reasoning = content.split('</think>')[0].split('<think>')[-1] %}
      {%- set content = content.split('</think>')[-1].lstrip('\\n') %}
    {%- endif %}
    {{- '<|im_start|>assistant\\n' }}
    {%- if loop.last and reasoning %}
      {{- '<think>\\n' + reasoning.strip('\\n') + '\\n</think>\\n\\n' }}
    {%- endif %}
    {{- content + '<|im_end|>\\n' }}
  {%- else %}
    {{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>\\n' }}
  {%- endif %}
{%- endfor %}
"""

_PROMPT = """\
{%- if add_generation_prompt %}
  {{- '<|im_start|>assistant\\n' }}
  {%- if enable_thinking is defined and enable_thinking is false %}
    {{- '<think>\\n\\n</think>\\n\\n' }}
  {%- elif OPENED %}
    {{- '<think>\\n' }}
  {%- endif %}
{%- endif %}
"""


def chat_template(*, opened: bool = False) -> str:
    """The Jinja chat template. `opened`: the generation prompt opens the think block itself."""
    return _MESSAGES + _PROMPT.replace("OPENED", "true" if opened else "false")


def _byte_symbols() -> list[str]:
    """GPT-2's byte-to-symbol table, in token-id order: printable bytes keep their character, the others
    are shifted above 255 so that every byte is a visible symbol."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    rest = [b for b in range(256) if b not in printable]
    return [chr(b) for b in printable] + [chr(256 + i) for i in range(len(rest))]


def _vocab() -> tuple[list[str], list[int], list[str]]:
    """Tokens, their types and the merges that build `_WORDS` left to right."""
    import gguf

    symbols = _byte_symbols()
    assert symbols[10 + 188] == "Ċ" and symbols[32 + 188] == "Ġ"  # newline and space, as in GPT-2
    tokens = list(symbols)
    merges: list[str] = []
    known = set(tokens)
    for word in _WORDS:
        built = word[0]
        for char in word[1:]:
            merged = built + char
            if merged not in known:
                merges.append(f"{built} {char}")
                tokens.append(merged)
                known.add(merged)
            built = merged
    types = [int(gguf.TokenType.NORMAL)] * len(tokens)
    for special in SPECIALS:
        tokens.append(special)
        kind = gguf.TokenType.USER_DEFINED if "think" in special else gguf.TokenType.CONTROL
        types.append(int(kind))
    return tokens, types, merges


def _weights(n_vocab: int, seed: int) -> dict[str, object]:
    import numpy as np

    rng = np.random.default_rng(seed)
    head = N_EMBD // N_HEAD

    def normal(*shape: int) -> object:
        return rng.normal(0.0, 0.02, size=shape).astype(np.float32)

    # numpy shapes are ggml's dimensions reversed: (rows, columns) = (ne1, ne0)
    out: dict[str, object] = {
        "token_embd.weight": normal(n_vocab, N_EMBD),
        "output_norm.weight": np.ones(N_EMBD, dtype=np.float32),
        "output.weight": normal(n_vocab, N_EMBD),
    }
    for i in range(N_LAYERS):
        out |= {
            f"blk.{i}.attn_norm.weight": np.ones(N_EMBD, dtype=np.float32),
            f"blk.{i}.attn_q.weight": normal(N_EMBD, N_EMBD),
            f"blk.{i}.attn_k.weight": normal(head * N_HEAD_KV, N_EMBD),
            f"blk.{i}.attn_v.weight": normal(head * N_HEAD_KV, N_EMBD),
            f"blk.{i}.attn_output.weight": normal(N_EMBD, N_EMBD),
            f"blk.{i}.ffn_norm.weight": np.ones(N_EMBD, dtype=np.float32),
            f"blk.{i}.ffn_gate.weight": normal(N_FF, N_EMBD),
            f"blk.{i}.ffn_up.weight": normal(N_FF, N_EMBD),
            f"blk.{i}.ffn_down.weight": normal(N_EMBD, N_FF),
        }
    return out


def write_model(path: Path, *, opened: bool = False, seed: int = 0) -> Path:
    """Write the model to `path` (about 470 KB, well under a second) and return the path."""
    import gguf

    tokens, types, merges = _vocab()
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_name("qualeval-tiny-opened" if opened else "qualeval-tiny")
    writer.add_context_length(N_CTX)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYERS)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD_KV)
    writer.add_rope_dimension_count(N_EMBD // N_HEAD)
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_file_type(int(gguf.LlamaFileType.ALL_F32))
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(tokens.index("<|endoftext|>"))
    writer.add_pad_token_id(tokens.index("<|endoftext|>"))
    writer.add_eos_token_id(tokens.index("<|im_end|>"))
    writer.add_add_bos_token(False)
    writer.add_chat_template(chat_template(opened=opened))
    for name, array in _weights(len(tokens), seed).items():
        writer.add_tensor(name, array)  # type: ignore[arg-type]
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
