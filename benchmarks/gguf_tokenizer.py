"""A Hugging Face tokenizer folder written from a GGUF's own vocabulary: for tools that want one offline.

llama-benchy (and vllm bench serve) count prompts with a Hugging Face tokenizer. Where no download is possible,
the GGUF a llama-server serves holds everything a byte-level BPE tokenizer needs: `tokenizer.ggml.tokens`,
`tokenizer.ggml.merges`, the token types (3 = control: a special token), the special ids, whether a BOS is added,
the pre-tokenizer's name and the chat template. This writes `tokenizer.json` (loaded by `tokenizers` and by
transformers' AutoTokenizer) and `tokenizer_config.json` (the special tokens and `chat_template`).

    python benchmarks/gguf_tokenizer.py MODEL.gguf OUT_DIR [--check http://127.0.0.1:PORT]

`--check` tokenizes a few texts both here and with the server's `POST /tokenize` and exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

# llama.cpp's pre-tokenizers by `tokenizer.ggml.pre`: the GPT-2 split, with digits one by one for the StarCoder
# family (SmolLM among them), or the Llama-3 / Qwen2 pattern
_GPT2 = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
_DIGITS = {"type": "Digits", "individual_digits": True}
_LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_QWEN2 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_SPLIT_THEN_BYTES = {**_GPT2, "use_regex": False}
PRE = {
    "default": [_GPT2],
    "gpt2": [_GPT2],
    "smollm": [_DIGITS, _GPT2],
    "starcoder": [_DIGITS, _GPT2],
    "refact": [_DIGITS, _GPT2],
    "llama-bpe": [{"type": "Split", "pattern": {"Regex": _LLAMA3}, "behavior": "Isolated"}, _SPLIT_THEN_BYTES],
    "qwen2": [{"type": "Split", "pattern": {"Regex": _QWEN2}, "behavior": "Isolated"}, _SPLIT_THEN_BYTES],
}
CONTROL = 3


def read_gguf(path: Path) -> dict[str, Any]:
    """The tokenizer's fields of a GGUF file (gguf package)."""
    from gguf import GGUFReader

    fields = GGUFReader(str(path)).fields
    out = {k: fields[k].contents() for k in fields if k.startswith("tokenizer.")}
    out["context_length"] = next((fields[k].contents() for k in fields if k.endswith(".context_length")), None)
    return out


def tokenizer_json(meta: dict[str, Any]) -> dict[str, Any]:
    """tokenizer.json for a byte-level BPE vocabulary (`tokenizer.ggml.model = gpt2`)."""
    model, pre = meta.get("tokenizer.ggml.model"), meta.get("tokenizer.ggml.pre", "default")
    if model != "gpt2" or pre not in PRE:
        raise SystemExit(f"only byte-level BPE vocabularies are written here (model {model!r}, pre {pre!r})")
    tokens: list[str] = meta["tokenizer.ggml.tokens"]
    types: list[int] = meta["tokenizer.ggml.token_type"]
    specials = [i for i, t in enumerate(types) if t == CONTROL]
    added = [
        {"id": i, "content": tokens[i], "single_word": False, "lstrip": False, "rstrip": False}
        | {"normalized": False, "special": True}
        for i in specials
    ]
    bos = meta.get("tokenizer.ggml.bos_token_id")
    post: dict[str, Any] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True}
    if meta.get("tokenizer.ggml.add_bos_token") and bos is not None:
        post = {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": tokens[bos], "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {tokens[bos]: {"id": tokens[bos], "ids": [bos], "tokens": [tokens[bos]]}},
        }
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": PRE[pre]},
        "post_processor": post,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": {t: i for i, t in enumerate(tokens)},
            "merges": list(meta["tokenizer.ggml.merges"]),
        },
    }


def tokenizer_config(meta: dict[str, Any]) -> dict[str, Any]:
    tokens: list[str] = meta["tokenizer.ggml.tokens"]

    def name(key: str) -> str | None:
        i = meta.get(f"tokenizer.ggml.{key}_token_id")
        return tokens[i] if i is not None else None

    return {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": name("bos"),
        "eos_token": name("eos"),
        "unk_token": name("unknown"),
        "pad_token": name("padding"),
        "add_bos_token": bool(meta.get("tokenizer.ggml.add_bos_token")),
        "clean_up_tokenization_spaces": False,
        "model_max_length": int(meta.get("context_length") or 8192),
        "chat_template": meta.get("tokenizer.chat_template"),
    }


def write_folder(gguf: Path, out: Path) -> Path:
    """`out` with tokenizer.json and tokenizer_config.json from the GGUF's vocabulary."""
    meta = read_gguf(gguf)
    out.mkdir(parents=True, exist_ok=True)
    (out / "tokenizer.json").write_text(json.dumps(tokenizer_json(meta), ensure_ascii=False))
    (out / "tokenizer_config.json").write_text(json.dumps(tokenizer_config(meta), ensure_ascii=False, indent=1))
    return out


def differences(folder: Path, root: str, texts: list[str]) -> list[str]:
    """The texts this tokenizer splits otherwise than the server's /tokenize (no special tokens added)."""
    import httpx
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    out = []
    for text in texts:
        ours = tok.encode(text, add_special_tokens=False).ids
        reply = httpx.post(f"{root}/tokenize", json={"content": text, "add_special": False}, timeout=60)
        theirs = reply.json()["tokens"]
        if ours != theirs:
            out.append(f"{text[:40]!r}: {len(ours)} tokens here, {len(theirs)} by the server")
    return out


SAMPLES = [
    "Hello, world! It's 2024-05-09; 3.14159 × 42 = 131.95 (approx.)",
    "  leading spaces\n\n\ttabs and\r\nnewlines   trailing   ",
    "naïve café — “quotes” and emoji 🎉 ünïcödé, 中文字符, ﬁ ligature",
    "<|im_start|>user\nspecial tokens in text<|im_end|>",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gguf", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--check", metavar="ROOT", help="a llama-server serving this GGUF, e.g. http://127.0.0.1:8080")
    args = parser.parse_args()
    folder = write_folder(args.gguf, args.out)
    print(f"wrote {folder}/tokenizer.json and tokenizer_config.json")
    if args.check:
        wrong = differences(folder, args.check.rstrip("/"), SAMPLES)
        print("\n".join(wrong) or f"tokenized like {args.check}/tokenize on {len(SAMPLES)} texts")
        sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
