"""What every check of a revise step reads from its requests (lessons 02 and 03): a revision carries the task
and the failed checks, not an earlier draft's code, and is a new sample (a temperature above 0, its own
seed); and, for the loops of 03 and 04, that a loop revises with the step it is handed."""

from __future__ import annotations

from collections.abc import Sequence

from reflect.tasks.task import Task
from reflect.testing import Call

from . import short


def body(code_block: str) -> str:
    """The code inside a fenced draft, without its def line: what must not reach a fresh request."""
    return code_block.split("\n", 2)[2].removesuffix("```").strip()


def revision_problem(call: Call, task: Task, feedback: str, old: Sequence[str], where: str) -> str:
    """What is wrong with one revision's request, or "": the task and each failed check of `feedback`
    (its lines after the first, without "- FAIL ") in it, none of the `old` drafts' code."""
    text = "\n".join(str(m.get("content", "")) for m in call.messages)
    if task.prompt() not in text:
        return f"{where} does not carry the task (task.prompt()): {short(text, 120)}"
    missing = [
        line for line in feedback.splitlines()[1:] if line.removeprefix("- FAIL ") not in text
    ]
    if missing:
        return (
            f"{where} does not carry the failed checks of the latest feedback, e.g. {short(missing[0])}: "
            "the model cannot fix what it is not shown."
        )
    shown = [d for d in old if body(d) in text]
    if shown:
        return (
            f"{where} still shows an earlier draft's code ({short(body(shown[0]))}): the course measured that "
            "a revision shown its old code mostly sends it back; leave it out."
        )
    return ""


def sampling_problem(revisions: Sequence[Call], where: str) -> str:
    """What is wrong with a run's revisions as new samples, or "": each states a temperature above 0 (a number),
    and no two share a seed (at temperature 0, or with one seed, the same feedback gets the same reply)."""
    for k, call in enumerate(revisions, 1):
        t = call.params.get("temperature")
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0.05 <= t <= 2:
            return (
                f"{where} revision {k} was sent with temperature={t!r}: a new sample needs a temperature above 0 "
                "(say 0.3 to 1.0; the server takes 0 to 2), stated in the call: at 0, or next to it, the model decodes "
                "greedily and the same feedback gets the same reply."
            )
    seeds = [call.params.get("seed") for call in revisions]
    if any(isinstance(x, bool) or not isinstance(x, int) for x in seeds) or len(set(seeds)) != len(
        seeds
    ):
        return (
            f"{where} the revisions' seeds were {seeds}: give each revision of a run its own seed, a whole number, "
            "or two of them can be the same sample."
        )
    return ""


class ReviseSpy:
    """A `revise(chat, task, code, feedback, n)` for a loop check: it keeps what the loop handed it and returns a
    draft of its own per call, so the check can see that the loop revises with the step it is given, passes the
    draft and feedback it just judged and the next draft's number, and judges what comes back."""

    def __init__(self, entry_point: str):
        self.entry_point, self.calls, self.returned = entry_point, [], []

    def __call__(self, chat, task, code, feedback, n):  # noqa: ANN001 - the learner's revise signature
        self.calls.append((code, feedback, n))
        self.returned.append(
            f"def {self.entry_point}(*args):\n    return {900 + len(self.calls)}\n"
        )
        return self.returned[-1]


def spy_problem(spy: ReviseSpy, first: str, feedback: Sequence[str], seen: Sequence[str]) -> str:
    """What is wrong with how a loop used its `revise` (the spy), or "": it judged the first draft, then for each
    revision handed the spy the draft and the feedback just judged and the number of the draft to make (2, 3,
    ...), and judged what the spy returned."""
    drafts = [first, *spy.returned]
    want = [(drafts[i].strip(), feedback[i], i + 2) for i in range(len(spy.calls))]
    got = [(str(c).strip(), f, n) for c, f, n in spy.calls]
    if not spy.calls:
        return "the loop never called the revise step it was given (revise=...): it revises with its own."
    if got != want:
        for (gc, gf, gn), (wc, wf, wn) in zip(got, want, strict=False):
            if gn != wn:
                return f"revise got n={gn!r} for draft {wn}: n is the number of the draft to make (2 for the first revision)."
            if gf != wf:
                return f"revise got the feedback {gf!r}; the critique of the draft before it was {wf!r}."
            if gc != wc:
                return "revise was not handed the draft the critic just judged."
        return f"the loop called revise {len(got)} times; it should have {len(want)}."
    if [s.strip() for s in seen[1:]] != [r.strip() for r in spy.returned[: len(seen) - 1]]:
        return "the critic was not shown the drafts the revise step returned: the next draft is what revise returns."
    return ""
