"""One sampling setting per role, for every lesson and strategy (`SAMPLING`).

Judges answer at temperature 0; the refiner, reflector and test writer at 0.2; the sampler at
0.6 with a seed per attempt. Why each: docs/package.md, "The modules in detail".
"""

from __future__ import annotations

SEED = 42
SAMPLING: dict[str, dict] = {
    "generator": {"temperature": 0.0, "max_tokens": 512},  # the first draft, in lessons 01-06
    "reviewer": {"temperature": 0.0, "max_tokens": 300},  # lesson 02's APPROVED reviewer
    "critic": {"temperature": 0},  # a judge is a function of its input (its cap is its own)
    "evaluator": {"temperature": 0.0},  # Reflexion's judge
    "refiner": {"temperature": 0.2, "max_tokens": 512},  # a revision of a draft it is shown
    "reflector": {"temperature": 0.2},  # Reflexion's lesson from a failure
    "test_writer": {"temperature": 0.2},  # the agent's own tests
    "sampler": {"temperature": 0.6},  # independent attempts: resample, Reflexion
}


def sampling(role: str, seed: int | None = SEED) -> dict:
    """The keyword arguments a call in `role` is sent with (temperature, max_tokens where capped, seed)."""
    return {**SAMPLING[role], **({} if seed is None else {"seed": seed})}
