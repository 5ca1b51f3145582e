"""Reading a reviewer's verdict from free text: the APPROVED sentinel and its pitfalls.

Three readings, from the most naive to the strict one the course uses:
- `contains_sentinel`: "APPROVED" anywhere (common in tutorials): "Not APPROVED yet" approves.
- `starts_with_sentinel`: the textbook check, `review.strip().upper().startswith("APPROVED")`:
  "**APPROVED**" is missed, and "APPROVED? Not yet ..." or "Approvedly bad" approve.
- `strict_sentinel`: the first non-empty line, without markdown emphasis and a final
  period or exclamation mark, must be exactly the sentinel (upper case). Conservative: a
  reviewer that adds words on the same line is read as "not approved", which costs one more
  round, never a false approval.
"""

from __future__ import annotations

import re
from collections.abc import Callable

ApprovalRule = Callable[[str], bool]  # review text -> approved?
_MARKUP = re.compile(r"^[\s*_`#>~\-]+|[\s*_`~]+$")


def contains_sentinel(review: str, sentinel: str = "APPROVED") -> bool:
    """The naive reading: the word appears anywhere in the review."""
    return sentinel in (review or "")


def starts_with_sentinel(review: str, sentinel: str = "APPROVED") -> bool:
    """The textbook reading: the review starts with the word."""
    return (review or "").strip().upper().startswith(sentinel)


def strict_sentinel(review: str, sentinel: str = "APPROVED") -> bool:
    """The strict reading: the review is the word alone, or the word on its own first line."""
    for line in (review or "").splitlines():
        if line.strip():
            core = _MARKUP.sub("", line.strip())
            core = _MARKUP.sub("", core.rstrip(".!"))
            return core == sentinel
    return False


def verdict_for(sentinel: str) -> ApprovalRule:
    """A one-argument approval rule for another sentinel, e.g. verdict_for("CODE_IS_PERFECT")."""
    return lambda review: strict_sentinel(review, sentinel)
