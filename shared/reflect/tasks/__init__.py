"""The tasks layer: the course's tasks and HumanEval, each with hidden tests and static checks."""

from .task import Task, course_tasks, get_task, humaneval_tasks

__all__ = ["Task", "course_tasks", "get_task", "humaneval_tasks"]
