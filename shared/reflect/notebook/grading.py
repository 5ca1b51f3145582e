"""Check cells for exercises: a plain-words verdict and, when it is not there yet, a hint."""

from __future__ import annotations


def grade(passed: bool, success: str, hint: str) -> None:
    """Print whether the exercise is solved; never raises, so a notebook runs top to bottom."""
    print(f"✅ {success}" if passed else f"❌ Not yet. Hint: {hint}")
