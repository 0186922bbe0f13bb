"""The reference server: a simulated reasoning model behind real servers' wire formats."""

from qualeval.sim.answerkey import AnswerKey
from qualeval.sim.behaviour import Behaviour
from qualeval.sim.config import FAULTS, TOOL_FAULTS, Latency, SimConfig, parse_faults
from qualeval.sim.flavours import FLAVOURS, Flavour
from qualeval.sim.passback import consumed_reasoning
from qualeval.sim.process import server_process
from qualeval.sim.server import SimServer, running_server

__all__ = [
    "FAULTS",
    "FLAVOURS",
    "TOOL_FAULTS",
    "AnswerKey",
    "Behaviour",
    "Flavour",
    "Latency",
    "SimConfig",
    "SimServer",
    "consumed_reasoning",
    "parse_faults",
    "running_server",
    "server_process",
]
