"""The passback probe against a real server: SmolLM2-135M-Instruct served by llama-server under GLM-4.7-Flash's
chat template (as llama.cpp ships it: tools, and earlier reasoning written back when `clear_thinking` is false,
which llama-server sets from `--reasoning-preserve`; /props shows `supports_preserve_reasoning`), with
`--reasoning-preserve` on and off. The probe's prompt-token count must tell the two apart: on, the reasoning sent
under `reasoning_content` is consumed; off, it is dropped without a word. llama-server reads no `reasoning` field
back either way. Measured here (b11434): a baseline of 358 prompt tokens, +294 with the reasoning under
`reasoning_content` (or inline, which this template parses out of the content) with preserve on, +0 with it off.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qualeval.records import ProbeResult, passback_found
from qualeval.run import check_passback
from qualeval.wire import ChatClient, check_config, run_async
from tests.real_server.conftest import SMOLLM2, SMOLLM2_ARGS, TEMPLATES, LlamaServer

pytestmark = [pytest.mark.real_server, pytest.mark.real_model, pytest.mark.xdist_group("real_passback")]
"""One xdist worker for the file: one server at a time on a two-core machine."""

GLM = TEMPLATES / "GLM-4.7-Flash.jinja"
PRESERVE = {"on": "--reasoning-preserve", "off": "--no-reasoning-preserve"}


@pytest.fixture(scope="module", params=sorted(PRESERVE))
def served(request: pytest.FixtureRequest, llama_binary: Path, tmp_path_factory: Any) -> Iterator[tuple[str, str]]:
    """(preserve on or off, the server's /v1 URL): one server at a time."""
    if not GLM.is_file():  # a failure under CI, as every skip of a real_server test
        pytest.skip(f"the real chat template is missing: {GLM} (../shared/data/chat_templates)")
    log = tmp_path_factory.mktemp(f"passback-{request.param}") / "llama-server.log"
    args = [*SMOLLM2_ARGS, "--chat-template-file", str(GLM), PRESERVE[request.param]]
    server = LlamaServer(llama_binary, SMOLLM2, log, args=args)
    server.start()
    try:
        yield request.param, server.url
    finally:
        server.stop()


def _probed(url: str) -> ProbeResult:
    async def go() -> ProbeResult:
        config = check_config(base_url=url, timeout=600.0, max_retries=0, concurrency=4)
        found = ProbeResult(base_url=url, model="smollm2", simulated=False)
        async with ChatClient(config) as client:
            await check_passback(client, "smollm2", found, seconds=600.0)  # slow when the machine is busy
        return found

    return run_async(go())


def test_the_prompt_count_tells_preserve_on_from_off(served: tuple[str, str]) -> None:
    preserve, url = served
    found = _probed(url)
    checks = {c.sent: c for c in found.passback or ()}
    for check in checks.values():
        print(f"--reasoning-preserve {preserve}: {check.line()}")  # the measured figures (see -s)
    assert checks["none"].verdict == "baseline" and checks["none"].prompt_tokens
    assert checks["reasoning"].verdict == "dropped"  # llama-server reads no `reasoning` field back
    if preserve == "on":
        assert checks["reasoning_content"].verdict == "consumed"
        assert (checks["reasoning_content"].added or 0) > 100  # the reasoning is a few hundred tokens
        assert passback_found(found) == "reasoning_content"
    else:
        assert checks["reasoning_content"].verdict == "dropped"
        assert checks["reasoning_content"].added == 0
        assert checks["inline"].verdict == "dropped"  # the template parses it out of the content and drops it too
        assert passback_found(found) == "none"
