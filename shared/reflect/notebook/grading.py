"""Check cells for exercises: a plain-words verdict and, when it is not there yet, hints in tiers.

    grade(ok, "what the learner got right", "a nudge", "a bigger hint", "the answer")

The first failed run of a check cell shows the first hint only; each further failed run of
the same cell shows one more, so a learner asks for the answer by running the check again,
and a fresh kernel (or nbval) always starts at the nudge.
"""

from __future__ import annotations

_shown: dict[str, int] = {}


def grade(passed: bool, success: str, hint: str, *more_hints: str) -> None:
    """Print whether the exercise is solved; never raises, so a notebook runs top to bottom."""
    hints = (hint, *more_hints)
    key = hint  # the nudge names the exercise's check cell well enough
    if passed:
        _shown.pop(key, None)
        print(f"✅ {success}")
        return
    tier = min(_shown.get(key, 0) + 1, len(hints))
    _shown[key] = tier
    for n in range(tier):
        label = "Hint" if len(hints) == 1 else f"Hint {n + 1} of {len(hints)}"
        print(f"{'❌ Not yet. ' if n == 0 else ''}{label}: {hints[n]}")
    if tier < len(hints):
        print("(Run this cell again for the next hint.)")


def reset_hints() -> None:
    """Start every exercise's hints at the nudge again."""
    _shown.clear()
