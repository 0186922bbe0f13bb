"""An agent's episode: the API classes a multi-turn item runs against, and (loop) the model driven through it.

classes     bfcl_classes: the task's API classes, loaded in-process from its wheel's source (ClassSource)
env         open_env, execute, state: one episode's instances, a call executed on them, their public state
"""

from qualeval.agent.classes import ClassSource, bfcl_classes
from qualeval.agent.env import Env, execute, open_env, run_call, state

__all__ = ["ClassSource", "Env", "bfcl_classes", "execute", "open_env", "run_call", "state"]
