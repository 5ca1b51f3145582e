"""The named strategies of `python -m course_runtime.bench`: each is one short configuration of the shared
parts. To add a strategy, add one line to `catalog`. `LESSON_06` is lesson 06's seven; its fair test's arms
are `reflect.evaluation.feedback.feedback_arms`. Details: docs/package.md, "The modules in detail".
"""

from __future__ import annotations

from collections.abc import Callable

from reflect.evaluation.feedback import ARM_FEEDBACK, feedback_arm
from reflect.judging.controller import StopRule
from reflect.records import Strategy
from reflect.strategies import MakerChecker, OneShot, Reflexion, Resample, ScoredReflection

LESSON_06 = (
    "one-shot",
    "resample",
    "maker-checker",
    "scored",
    "evidence:examples",
    "evidence:self-tests",
    "reflexion",
)


def catalog(k: int = 6, iterations: int = 3) -> dict[str, Callable[[], Strategy]]:
    """Every named strategy, as a factory: `k` samples for resampling, `iterations` drafts for the loops."""
    evidence = StopRule(
        threshold=10, max_iterations=iterations
    )  # accept only when every assert passes

    def repair(feedback: str, name: str) -> Resample:
        return Resample(
            k=k,
            select="examples-or-self-tests",
            stop_on_pass=True,
            first="draft",
            feedback=feedback,
            name=name,
        )

    return {
        "one-shot": lambda: OneShot(),
        "resample": lambda: Resample(k=k, select="self-tests", name="resample"),
        "maker-checker": lambda: MakerChecker(max_iterations=iterations),
        "scored": lambda: ScoredReflection(
            "llm", StopRule(max_iterations=iterations), name="scored"
        ),
        "evidence:examples": lambda: ScoredReflection(
            "examples", evidence, name="evidence:examples"
        ),
        "evidence:self-tests": lambda: ScoredReflection(
            "self-tests", evidence, name="evidence:self-tests"
        ),
        "reflexion": lambda: Reflexion(
            memory_mode="reflections", max_attempts=iterations, name="reflexion"
        ),
        # the refine loop judged by the statement's examples, at most 2 drafts (the first and one revision)
        "examples:2": lambda: ScoredReflection(
            "examples", StopRule(threshold=10, max_iterations=2), name="examples:2"
        ),
        # lesson 06's feedback experiment: the first draft, then up to k - 1 samples while the evidence fails, which
        # see nothing but the task (blind), the failed checks, or the failed checks and the draft's code
        "blind-sample": lambda: repair("none", "blind-sample"),
        "repair-sample": lambda: repair("failure", "repair-sample"),
        "repair-edit-sample": lambda: repair("failure+code", "repair-edit-sample"),
        **{arm: (lambda arm=arm: feedback_arm(arm)) for arm in ARM_FEEDBACK},
    }


def strategies(
    names: tuple[str, ...] = LESSON_06, k: int = 6, iterations: int = 3
) -> list[Strategy]:
    """The named strategies, configured as `catalog` says (`k` samples, `iterations` drafts)."""
    make = catalog(k, iterations)
    unknown = [n for n in names if n not in make]
    if unknown:
        raise ValueError(f"unknown strategies {unknown}; choose from {', '.join(make)}")
    return [make[n]() for n in names]
