"""Run directories a release engineer would set on a board: six serving configs of one model, three tasks, two
load levels each, settings that differ in long values (server addresses, lists, unset sampling), written directly
with the records types so every figure is known. The board page's tests read these."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qualeval.records import ConstraintRecord, Extraction, Record, Score, Timing, Usage

TASKS = ("gsm8k", "mmlu_pro", "knowledge_qa")
LEVELS = ("c=1", "c=16")
ITEMS = 60


@dataclass(frozen=True)
class Config:
    """One serving config: what its manifest says, how often it is right, how quick it is."""

    folder: str
    settings: dict[str, Any]
    wrong: float
    """The share of items answered wrong, drawn per item from a seed shared by every config (so configs agree
    on most items, as real configs of one model do)."""
    ttft: float
    decode: float
    """Output tokens per second of one request."""
    tokens: int = 220
    extra: dict[str, Any] = field(default_factory=dict)


LONG = "http://gpu-node-17.inference.internal.example.com:8000/v1"
REPLICAS = [f"http://replica-{k}.speculative-decoding.svc.cluster.local:8000/v1" for k in range(3)]
"""One config served by three replicas: a list of long addresses in the key."""
CONFIGS = (
    Config("fp16-baseline", {"base_url": LONG, "max_tokens": [], "temperature": None}, 0.20, 90.0, 38.0),
    Config("q8_0-kv", {"base_url": LONG.replace("17", "18"), "max_tokens": [], "temperature": None}, 0.21, 85.0, 44.0),
    Config("q4_0-kv-flash", {"base_url": LONG.replace("17", "19"), "max_tokens": [2048]}, 0.34, 70.0, 61.0),
    Config(
        "spec-draft",
        {"base_url": LONG.replace("17", "20"), "max_tokens": [], "temperature": 0.0, "endpoints": REPLICAS},
        0.20,
        95.0,
        52.0,
    ),
    Config("budget-1k", {"base_url": LONG.replace("17", "21"), "max_tokens": [1024]}, 0.29, 88.0, 40.0, 150),
    Config("sampled", {"base_url": LONG.replace("17", "22"), "max_tokens": [], "temperature": 0.7}, 0.23, 91.0, 37.0),
)


def _record(task: str, level: str, i: int, wrong: bool, config: Config, load: float) -> Record:
    spread = 0.6 + (i * 37 % 17) / 10  # the same item is long or short in every config, as a real item is
    tokens = round(config.tokens * spread)
    reasoning = tokens - 40
    end = config.ttft * load * spread + 1000 * tokens / (config.decode / load)
    return Record(
        level=level,
        warmup=i == 0,
        sample_id=f"{task}/test/{i}",
        task=task,
        session="s",
        sent_at=1000.0 + i * end / 1000 / (16 if level == "c=16" else 1),
        request={},
        reasoning="",
        content="",
        reasoning_source="field:reasoning_content",
        status="ok",
        finish_reason="stop",
        usage=Usage(completion_tokens=tokens, reasoning_tokens=reasoning, answer_tokens=40),
        timing=Timing(
            ttft=config.ttft * load * spread,
            first_content=config.ttft * load + reasoning * 1000 / config.decode,
            end=end,
        ),
        attempts=1,
        constraint=ConstraintRecord(mode="off"),
        extraction=Extraction(value=None, rung="none"),
        score=Score(correct=not wrong, detail=""),
        gold="",
        meta={},
    )


def write_config(root: Path, config: Config, seed: int = 7) -> Path:
    """`config`'s run: every task at every level, ITEMS items each."""
    run = root / config.folder
    run.mkdir(parents=True)
    settings = {"tasks": list(TASKS), "model": "qwen3-8b", "out": str(run), "concurrency": [1, 16]}
    spec = {"doc_to_text": "{{ question }}", "scorer": "exact", "generator": "g"}
    manifest = {
        "fingerprint": config.folder,
        "config": {**settings, **config.settings},
        "pinned": {"constraint": "off", "thinking_switch": "none"},
        "tasks": {task: {"spec": {"name": task, **spec}} for task in TASKS},
    }
    (run / "manifest.json").write_text(json.dumps(manifest))
    with (run / "records.jsonl").open("w") as handle:
        for t, task in enumerate(TASKS):
            draws = random.Random(seed + t)
            for level in LEVELS:
                load = 1.0 if level == "c=1" else 1.8
                for i in range(ITEMS):
                    wrong = draws.random() < config.wrong
                    handle.write(_record(task, level, i, wrong, config, load).model_dump_json() + "\n")
    return run


def write_board_runs(root: Path) -> list[Path]:
    return [write_config(root, config) for config in CONFIGS]


def write_rerun(root: Path) -> Path:
    """The baseline's configuration run again: the same answers, its speed a few percent off."""
    base = CONFIGS[0]
    return write_config(root, Config("fp16-again", base.settings, base.wrong, base.ttft * 1.04, base.decode * 0.97))
