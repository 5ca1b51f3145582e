"""reflect: the helper package of the reflection-pattern course.

Modules, each named for what it holds:
  config      settings from the environment / .env
  llm         connect(): the one way into a model; chat with accounting
  accounting  per-call ledger and cost table
  replay      vcrpy cassettes: record and replay model calls
  localmodel  the bundled Qwen2.5-Coder-1.5B GGUF: assemble and verify
  server      the shared local llama.cpp server (start, health, stop)
  sandbox     run model-written code with hidden tests in a separate, limited process
  extract     get code out of a model reply
  tasks       the course's tasks with hidden tests, and HumanEval
  checks      static (ast) checks: name, arity, docstring, type hints, forbidden calls
"""

from .accounting import Ledger
from .config import ConfigError, Settings
from .llm import Connection, ModelError, Reply, connect, response_format_for
from .replay import ReplayMiss

__all__ = [
    "ConfigError", "Connection", "Ledger", "ModelError", "Reply", "ReplayMiss", "Settings",
    "connect", "response_format_for",
]
