"""A structured critic verdict: JSON validated against a pydantic schema.

Score scale: an integer from 1 (unusable) to 10 (nothing left to fix). The server is asked to
constrain decoding to the schema (`Connection.response_format`), but constrained decoding
does not enforce every keyword (llama.cpp ignores numeric bounds), so every reply is
validated here; a reply that fails validation is a `ParseFailure`, never an exception and
never a retry loop of its own.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from pydantic import BaseModel, Field, ValidationError


class Critique(BaseModel):
    score: int = Field(ge=1, le=10, description="1 = unusable, 10 = nothing left to fix")
    issues: list[str] = Field(description="concrete problems, most important first")
    strengths: list[str] = Field(description="what is already right")
    suggestion: str = Field(description="the single most important fix")
    criteria: dict[str, int] | None = Field(default=None, description="optional per-criterion scores, 1-10")


def critique_schema() -> dict:
    """The JSON schema sent as response_format (without the optional per-criterion map)."""
    return {
        "type": "object",
        "properties": {
            "score": {"type": "integer", "minimum": 1, "maximum": 10},
            "issues": {"type": "array", "items": {"type": "string"}},
            "strengths": {"type": "array", "items": {"type": "string"}},
            "suggestion": {"type": "string"},
        },
        "required": ["score", "issues", "strengths", "suggestion"],
    }


@dataclass(frozen=True)
class ParseFailure:
    raw: str
    error: str  # one line: what was wrong


_OBJECT = re.compile(r"\{.*\}", re.S)


def parse_critique(text: str) -> Critique | ParseFailure:
    """Parse and validate a critic reply. JSON inside prose or a code fence is accepted."""
    raw = text or ""
    if not raw.strip():
        return ParseFailure(raw, "the critic reply is empty")
    try:
        data = json.loads(raw)
    except ValueError:
        m = _OBJECT.search(raw)
        if not m:
            return ParseFailure(raw, "no JSON object in the critic reply")
        try:
            data = json.loads(m.group(0))
        except ValueError as err:
            return ParseFailure(raw, f"invalid JSON: {err.msg} at position {err.pos}")
    if not isinstance(data, dict):
        return ParseFailure(raw, f"expected a JSON object, got {type(data).__name__}")
    try:
        return Critique.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "object"
        return ParseFailure(raw, f"{where}: {first['msg']} (got {first.get('input')!r})")
