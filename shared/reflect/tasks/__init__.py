"""The tasks layer: the course's tasks and HumanEval, each with hidden tests and static checks; the
prompts the strategies send; code out of a reply."""

from .extract import extract_code
from .prompts import (
    EVALUATOR_SYSTEM,
    GENERATOR_PROMPT,
    REFINER_SYSTEM,
    REVIEWER_PROMPT,
    TEXT_CRITIC_PROMPT,
    attempt_request,
    evaluator_messages,
    fresh_request,
    generator_messages,
    refine_request,
    reflection_messages,
)
from .task import Task, course_tasks, get_task, humaneval_tasks

__all__ = [
    "EVALUATOR_SYSTEM",
    "GENERATOR_PROMPT",
    "REFINER_SYSTEM",
    "REVIEWER_PROMPT",
    "TEXT_CRITIC_PROMPT",
    "Task",
    "attempt_request",
    "course_tasks",
    "evaluator_messages",
    "extract_code",
    "generator_messages",
    "get_task",
    "humaneval_tasks",
    "fresh_request",
    "refine_request",
    "reflection_messages",
]
