"""The reference server: a simulated reasoning model behind real servers' wire formats."""

from qualeval.sim.behaviour import AnswerKey, Behaviour
from qualeval.sim.flavours import FLAVOURS, Flavour
from qualeval.sim.process import server_process
from qualeval.sim.server import Latency, SimConfig, SimServer, parse_faults, running_server

__all__ = [
    "FLAVOURS",
    "AnswerKey",
    "Behaviour",
    "Flavour",
    "Latency",
    "SimConfig",
    "SimServer",
    "parse_faults",
    "running_server",
    "server_process",
]
