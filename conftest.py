"""Under nbval, the solved lessons run in replay and each exercise's wrong answers are graded.

See tests/nbval_lessons.py.
"""

pytest_plugins = ["tests.nbval_lessons"]
