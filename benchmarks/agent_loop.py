"""The agent loop's own client time per step, over the request itself, against the reference server in burst mode.

    python benchmarks/agent_loop.py [--episodes 20] [--reasoning-tokens 200]

BFCL multi-turn base episodes run through qualeval.agent.run_episode exactly as a run drives them: the history
grows, the tools of each turn are offered, each call is executed on BFCL's own API classes, the reasoning is
passed back, and every step is appended to a steps.jsonl. Each request goes to the reference server (no delays,
so the client is the only thing that can be slow). The ground truth's calls, one a step, are put on each
response after it has arrived, so the figure does not hang on what the server is keyed with.

Per step: the wall time of the episode, less the time spent in the request (send to last byte, the stand-in
calls included) and in executing the calls, is the loop's own time: building the history and the request, the
step's record and its line. Target: <= 1 ms per step. StepRecord.loop_ms, what the run records, is shown beside.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import tempfile
import time
from pathlib import Path

from qualeval.agent import Stamp, bfcl_classes, execute, open_env, run_episode
from qualeval.records import ClientConfig, EpisodeSpec, StepLog, ToolCall
from qualeval.run.episodic import step_judge
from qualeval.run.pipeline import request_for
from qualeval.sim import server_process
from qualeval.tasks import build_samples, load_tasks, parse_call
from qualeval.wire import ChatClient, ChatRequest, ChatResponse, run_async

TARGET_MS = 1.0


def script(spec: EpisodeSpec) -> list[tuple[ToolCall, ...]]:
    """The calls each step returns: the ground truth's, one a step, then an answer without a call, each turn."""
    steps: list[tuple[ToolCall, ...]] = []
    for turn, expected in enumerate(spec.expected):
        for i, text in enumerate(expected):
            name, _, kwargs = parse_call(text)
            steps.append((ToolCall(name=name, arguments=json.dumps(kwargs), id=f"b{turn}_{i}"),))
        steps.append(())
    return steps


class Sender:
    """The wire client's chat, timed, with the scripted calls put on each response."""

    def __init__(self, client: ChatClient, steps: list[tuple[ToolCall, ...]]) -> None:
        self.client, self.steps, self.seconds = client, list(steps), 0.0

    async def __call__(self, request: ChatRequest) -> ChatResponse:
        began = time.perf_counter()
        response = await self.client.chat(request)
        if response.error:
            raise SystemExit(f"request failed: {response.error}")
        calls = self.steps.pop(0) if self.steps else ()
        response = response.model_copy(update={"tool_calls": calls, "finish_reason": "tool_calls" if calls else "stop"})
        self.seconds += time.perf_counter() - began
        return response


async def measure(url: str, episodes: int, folder: Path) -> tuple[list[float], list[float], list[float]]:
    """Per step: the loop's own ms, the request's ms, and what the step record says (loop_ms)."""
    task = load_tasks("bfcl_multi_turn:base")[0]
    samples = build_samples(task, limit=episodes)
    source = bfcl_classes(task.spec)
    log = StepLog(folder)
    log.open()
    own: list[float] = []
    sent: list[float] = []
    recorded: list[float] = []
    async with ChatClient(ClientConfig(base_url=url, api_key=None, concurrency=1)) as client:
        await client.chat(ChatRequest(model="sim", messages=samples[0].messages))  # warm-up
        for sample in samples:
            assert sample.episode is not None
            sender = Sender(client, script(sample.episode))
            env = open_env(sample.episode, source)
            request = request_for(task, sample, "sim")
            began = time.perf_counter()
            episode = await run_episode(
                sender, request, sample.episode, functools.partial(execute, env),
                passback="reasoning_content", stamp=Stamp(sample.id, task.name), on_step=log.append,
                judge=step_judge(request.tool_choice),
            )  # fmt: skip
            wall = time.perf_counter() - began
            steps = len(episode.steps)
            tools = sum(s.tools_ms or 0.0 for s in episode.steps) / 1000.0
            own.append(1000.0 * (wall - sender.seconds - tools) / steps)
            sent.append(1000.0 * sender.seconds / steps)
            recorded.extend(s.loop_ms or 0.0 for s in episode.steps)
    log.close()
    return own, sent, recorded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--reasoning-tokens", type=int, default=200)
    args = parser.parse_args()
    server = ("--task", "syllogisms", "--burst", "--reasoning-tokens", str(args.reasoning_tokens))
    with server_process(*server) as url, tempfile.TemporaryDirectory() as folder:
        own, sent, recorded = run_async(measure(url, args.episodes, Path(folder)))
    loop_ms, request_ms = statistics.median(own), statistics.median(sent)
    print(f"{'per step (median over episodes)':40} {'ms':>8}")
    print(f"{'the request itself':40} {request_ms:8.3f}")
    print(f"{'the loop own (wall - request - tools)':40} {loop_ms:8.3f}")
    print(f"{'StepRecord.loop_ms (as recorded)':40} {statistics.median(recorded):8.3f}")
    print(f"loop / request: {loop_ms / request_ms:.2f}")
    verdict = "within" if loop_ms <= TARGET_MS else "OVER"
    share = loop_ms / TARGET_MS
    print(f"agent loop: {loop_ms:.3f} ms per step, {verdict} the {TARGET_MS:g} ms target ({share:.2f} of it)")


if __name__ == "__main__":
    main()
