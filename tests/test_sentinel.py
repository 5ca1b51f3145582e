import pytest

from reflect.judging.sentinel import (
    contains_sentinel,
    starts_with_sentinel,
    strict_sentinel,
    verdict_for,
)

CASES = [  # review, what a careful reader concludes
    ("APPROVED", True),
    ("APPROVED\n\nClean and correct.", True),
    ("**APPROVED**", True),
    ("APPROVED.", True),
    ("Not APPROVED yet: handle empty lists.", False),
    ("The code will be APPROVED once you add type hints.", False),
    ("APPROVED? Not quite: the tail of list2 is dropped.", False),
    ("Approved with reservations: add a docstring.", False),
    ("", False),
    ("```python\n# APPROVED by the senior dev\ndef f(): ...\n```", False),
]


@pytest.mark.parametrize("review,truth", CASES)
def test_strict_reading_matches_a_careful_reader(review, truth):
    assert strict_sentinel(review) is truth


def test_the_naive_readings_fail_where_the_lesson_says():
    wrong_contains = [r for r, t in CASES if contains_sentinel(r) != t]
    wrong_starts = [r for r, t in CASES if starts_with_sentinel(r) != t]
    assert "Not APPROVED yet: handle empty lists." in wrong_contains
    assert (
        "**APPROVED**" in wrong_starts
        and "APPROVED? Not quite: the tail of list2 is dropped." in wrong_starts
    )
    assert "Approved with reservations: add a docstring." in wrong_starts


def test_other_sentinel():
    check = verdict_for("CODE_IS_PERFECT")
    assert check("CODE_IS_PERFECT") and not check("APPROVED")
