"""One sampling setting per role, for every lesson and strategy.

A first draft is one request everywhere: `GENERATOR_PROMPT` as the system message, the task as the
user message, temperature 0, seed 42, up to 512 tokens. Lesson 01's one-shot, lesson 02's first
turn, lesson 03's loop, lesson 04's graph and lesson 06's scored and evidence strategies all send
it, so a first draft is paid once (the live request cache answers the repeats) and every loop
starts from the one-shot draft it is compared with.

Judges (reviewer, critic, evaluator) answer at temperature 0: a verdict is a function of its input.
Three roles sample on purpose, and the lessons that use them say why:
- `refiner` and `reflector`, temperature 0.2 (lessons 03 and 05): a revision, or a reflection on a
  failure, may move a little away from what it is shown;
- `test_writer`, 0.2 (lesson 05): the agent's own tests, written once per task;
- `sampler`, 0.6 (lesson 05's Reflexion attempts, lesson 06's resampling): independent attempts must
  differ, and at temperature 0 every attempt would be the same draft. Each attempt gets its own
  seed (42, 43, ...), so a run is still reproducible on llama.cpp.

The critic's 0 is written as the integer its recorded requests carry: 0 and 0.0 are the same
setting, but different request bytes to the cache and the cassettes.

Token caps that belong to a strategy (Reflexion's evaluator 400 and reflector 300, the test
writer's 300) are set where those calls are made.
"""

from __future__ import annotations

SEED = 42
SAMPLING: dict[str, dict] = {
    "generator": {
        "temperature": 0.0,
        "max_tokens": 512,
    },  # the first draft, the same request in lessons 01-06
    "reviewer": {"temperature": 0.0, "max_tokens": 300},  # lesson 02's APPROVED reviewer
    "critic": {
        "temperature": 0
    },  # a judge is a function of its input (its token cap is the critic's own)
    "evaluator": {"temperature": 0.0},  # Reflexion's judge
    "refiner": {"temperature": 0.2, "max_tokens": 512},  # a revision of a draft it is shown
    "reflector": {"temperature": 0.2},  # Reflexion's lesson from a failure
    "test_writer": {"temperature": 0.2},  # the agent's own tests
    "sampler": {"temperature": 0.6},  # independent attempts: resample, Reflexion
}


def sampling(role: str, seed: int | None = SEED) -> dict:
    """The keyword arguments a call in `role` is sent with (temperature, max_tokens where capped, seed)."""
    return {**SAMPLING[role], **({} if seed is None else {"seed": seed})}
