"""`python -m course_grading DIR`: what `python3 course.py grade DIR` runs."""

from . import main

main()
