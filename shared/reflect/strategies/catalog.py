"""The named strategies of `python -m course_runtime.bench`: each is one short configuration of the shared
parts. To add a strategy, add one line to `catalog`. `LESSON_06` is lesson 06's seven;
`feedback_arms(R)` its fair test. Details: docs/package.md, "The modules in detail".
"""

from __future__ import annotations

from collections.abc import Callable

from ..judging.controller import StopRule
from ..model.roles import SAMPLING
from ..records import Strategy
from .maker_checker import MakerChecker
from .one_shot import OneShot
from .reflexion import Reflexion
from .resample import Resample
from .scored import ScoredReflection

# lesson 06's fair test: what a sample after a failed first draft sees, by arm
ARMS = {
    "feedback:blind": "none",  # the task only: resampling with the same first draft and stop rule
    "feedback:checks": "failure",  # the checks it failed, never its code
    "feedback:checks+code": "failure+code",  # its code and the checks it failed
    "feedback:critique": "critique+code",  # its code and a critique by lesson 03's critic
}
SAMPLES_AFTER = 4  # samples after a failed first draft, at most, in every arm


def feedback_arm(arm: str, replicate: int = 0) -> Resample:
    """One arm of lesson 06's fair test in one replicate."""
    return Resample(
        k=1 + SAMPLES_AFTER,
        select="examples-or-self-tests",
        stop_on_pass=True,
        first="draft",
        feedback=ARMS[arm],
        name=arm if replicate == 0 else f"{arm}#{replicate}",
        replicate=replicate,
        sample_tokens=SAMPLING["generator"]["max_tokens"],
    )


def feedback_arms(replicates: int = 2) -> list[Resample]:
    """Every arm in every replicate, replicate by replicate."""
    return [feedback_arm(arm, r) for r in range(replicates) for arm in ARMS]


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
        **{arm: (lambda arm=arm: feedback_arm(arm)) for arm in ARMS},
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
