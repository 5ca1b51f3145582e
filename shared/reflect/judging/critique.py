"""A structured critic verdict: JSON validated against a pydantic schema, a score from 1 (unusable) to 10
(nothing left to fix). The server is asked to constrain decoding to the schema, but another server may enforce
less, so every reply is validated here: a reply that fails is a `ParseFailure`, never an exception. The optional
per-criterion scores (`Critique.criteria`) are not in the schema sent: the critic is never asked for them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import BaseModel, Field, StrictInt, StrictStr, ValidationError


class Critique(BaseModel):
    """A critic's verdict as validated JSON: score 1-10, issues, strengths, suggestion."""

    # strict types: a score of 7.0, "8" or true is a malformed verdict, not a score
    score: StrictInt = Field(ge=1, le=10, description="1 = unusable, 10 = nothing left to fix")
    issues: list[StrictStr] = Field(description="concrete problems, most important first")
    strengths: list[StrictStr] = Field(description="what is already right")
    suggestion: StrictStr = Field(description="the single most important fix")
    criteria: dict[str, int] | None = Field(
        default=None, description="optional per-criterion scores, 1-10"
    )


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
    """A critic reply that could not be used, with a one-line reason."""

    raw: str
    error: str  # one line: what was wrong


def _json_objects(raw: str):
    """Every complete JSON object in `raw`, in order: `raw_decode` from each `{` that is not
    inside an object already found (a dict in prose, a fenced block, two objects in a row)."""
    decoder = json.JSONDecoder()
    pos = raw.find("{")
    while pos != -1:
        try:
            obj, end = decoder.raw_decode(raw, pos)
        except ValueError:
            pos = raw.find("{", pos + 1)
            continue
        yield obj
        pos = raw.find("{", end)


def parse_critique(text: str) -> Critique | ParseFailure:
    """Parse and validate a critic reply: the first JSON object in it that is a valid critique.

    JSON inside prose or a code fence is accepted. With no valid critique, the failure names
    what was wrong with the first complete JSON object (or that there is none)."""
    raw = text or ""
    if not raw.strip():
        return ParseFailure(raw, "the critic reply is empty")
    try:
        data = json.loads(raw)
    except ValueError:
        candidates = list(_json_objects(raw))
        if not candidates:
            start, end = raw.find("{"), raw.rfind("}")
            if start == -1 or end < start:
                return ParseFailure(raw, "no JSON object in the critic reply")
            try:
                json.loads(raw[start : end + 1])
            except ValueError as err:  # say what is wrong with the broken object itself
                return ParseFailure(raw, f"invalid JSON: {err.msg} at position {err.pos}")
        data = next((c for c in candidates if isinstance(c, dict) and _valid(c)), candidates[0])
    if not isinstance(data, dict):
        return ParseFailure(raw, f"expected a JSON object, got {type(data).__name__}")
    try:
        return Critique.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "object"
        return ParseFailure(raw, f"{where}: {first['msg']} (got {first.get('input')!r})")


def _valid(data: dict) -> bool:
    try:
        Critique.model_validate(data)
    except ValidationError:
        return False
    return True
