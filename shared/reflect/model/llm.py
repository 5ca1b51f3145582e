"""What a model call returns and how it fails: `Reply` and `ModelError`, the types every loop of the package
handles, and `response_format_for`, the JSON-schema request a critic sends. The client that makes the calls
(`connect`, `Connection`, replay) is the course's runtime, `course_runtime.client`: a loop is given a `chat`.
"""

from __future__ import annotations

from dataclasses import dataclass


class ModelError(RuntimeError):
    """A provider failed after retries; the message says what to check."""


@dataclass
class Reply:
    """One chat completion: text, role, model, tokens, latency, finish reason."""

    text: str
    role: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    finish_reason: str | None = None


def response_format_for(schema: dict, name: str = "reply") -> dict:
    """Schema-constrained JSON in OpenAI's `json_schema` form, which llama.cpp's server, OpenAI,
    vLLM, Ollama and LM Studio accept.

    llama.cpp turns the schema into a grammar; tests/test_integration.py checks that it enforces
    types, required keys, enum, integer bounds, maxItems and pattern. Other servers differ, and a
    reply cut off by max_tokens is not JSON at all: validate what comes back.
    """
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
