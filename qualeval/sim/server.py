"""The reference server: a deterministic, OpenAI-compatible chat endpoint on 127.0.0.1.

Plain asyncio HTTP/1.1 (`httpio`): keep-alive, chunked SSE, every byte its own. It shares no code with the
client beyond the package: it is the opponent the client is tested against. Every response carries
`x-qualeval-simulated: true`, and `/v1/models` says `owned_by: qualeval-simulated`.

The parts: `config` what it is told, `state` what it keeps, `handler` the routes, `planning` the answer,
`pacing` its timing, `faults` how it breaks, `flavours` the wire formats.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator, Mapping
from functools import partial

from qualeval.sim.answerkey import AnswerKey
from qualeval.sim.config import SimConfig
from qualeval.sim.flavours import FLAVOURS, Flavour
from qualeval.sim.handler import serve_connection
from qualeval.sim.state import ServerState, new_state

__all__ = ["SimServer", "running_server"]


class SimServer:
    """One server: its state, and the listening socket once started."""

    def __init__(self, config: SimConfig, flavours: Mapping[str, Flavour] = FLAVOURS) -> None:
        """Raises InputError for a flavour not in `flavours`, an answer key it cannot read, a log it cannot write."""
        self.state: ServerState = new_state(config, flavours)
        self._listener: asyncio.Server | None = None

    @property
    def config(self) -> SimConfig:
        return self.state.config

    @property
    def key(self) -> AnswerKey | None:
        return self.state.key

    @property
    def episodes(self) -> int:
        """The multi-turn episodes the server answers (its episode key's)."""
        return len(self.state.episodes.episodes) if self.state.episodes is not None else 0

    async def start(self) -> int:
        """Listen; returns the port (the one the OS chose for port 0)."""
        handler = partial(serve_connection, self.state)
        # requests carry whole prompts: a long conversation outgrows asyncio's 64 KiB line limit
        self._listener = await asyncio.start_server(handler, self.config.host, self.config.port, limit=1 << 22)
        return self._listener.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._listener.wait_closed(), 1.0)
        observed = self.state.observed
        if observed.log is not None:
            observed.log.close()
            observed.log = None


@contextlib.contextmanager
def running_server(config: SimConfig, flavours: Mapping[str, Flavour] = FLAVOURS) -> Iterator[str]:
    """Run the server on a background thread with its own event loop; yields the base URL (…/v1)."""
    server = SimServer(config, flavours)  # before the loop: a config it refuses leaves nothing to close
    loop = asyncio.new_event_loop()
    port = loop.run_until_complete(server.start())
    thread = threading.Thread(target=loop.run_forever, name="qualeval-sim", daemon=True)
    thread.start()
    try:
        yield f"http://{config.host}:{port}/v1"
    finally:
        asyncio.run_coroutine_threadsafe(server.close(), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        with contextlib.suppress(Exception):
            for task in asyncio.all_tasks(loop):
                task.cancel()
            loop.run_until_complete(asyncio.sleep(0))
        loop.close()
