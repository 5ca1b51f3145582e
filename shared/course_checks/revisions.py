"""What every check of a revise step reads from its requests (lessons 02 and 03): a revision carries the task
and the failed checks, not an earlier draft's code, and two revisions after the same feedback are not the
same request."""

from __future__ import annotations

from collections.abc import Sequence

from reflect.tasks.task import Task
from reflect.testing import Call


def _short(value: object, width: int = 70) -> str:
    text = " ".join(str(value).split())
    return repr(text if len(text) <= width else text[: width - 3] + "...")


def body(code_block: str) -> str:
    """The code inside a fenced draft, without its def line: what must not reach a fresh request."""
    return code_block.split("\n", 2)[2].removesuffix("```").strip()


def revision_problem(call: Call, task: Task, feedback: str, old: Sequence[str], where: str) -> str:
    """What is wrong with one revision's request, or "": the task and each failed check of `feedback`
    (its lines after the first, without "- FAIL ") in it, none of the `old` drafts' code."""
    text = "\n".join(str(m.get("content", "")) for m in call.messages)
    if task.prompt() not in text:
        return f"{where} does not carry the task (task.prompt()): {_short(text, 120)}"
    missing = [
        line for line in feedback.splitlines()[1:] if line.removeprefix("- FAIL ") not in text
    ]
    if missing:
        return (
            f"{where} does not carry the failed checks of the latest feedback, e.g. {_short(missing[0])}: "
            "the model cannot fix what it is not shown."
        )
    shown = [d for d in old if body(d) in text]
    if shown:
        return (
            f"{where} still shows an earlier draft's code ({_short(body(shown[0]))}): the course measured that "
            "a revision shown its old code mostly sends it back; leave it out."
        )
    return ""


def repeat_problem(one: Call, two: Call, where: str) -> str:
    """What is wrong when two revisions after the same feedback are one request again, or ""."""
    if one.messages != two.messages:
        return ""
    if one.params == two.params:
        return (
            f"{where} the two revisions sent the same request ({one.params or 'no sampling of their own'}) after "
            "the same feedback: the model gives the same reply again. Each revision is a new sample."
        )
    if not one.params.get("temperature", 0) and not two.params.get("temperature", 0):
        return (
            f"{where} the two revisions differ only in their seed, at temperature 0: greedy decoding ignores "
            "the seed, so the reply repeats. Sample (a temperature above 0), with a new seed each time."
        )
    return ""
