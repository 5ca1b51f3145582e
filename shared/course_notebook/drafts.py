"""A chat wrapper that keeps every draft a loop writes, so a lesson can judge each one afterwards.

log = DraftLog(chat, task)
code, reason = your_loop(log, task)          # the loop is unchanged: it calls log as its chat
print(log.line())                            # hidden tests per draft: ['FAIL', 'pass']
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field

from reflect.judging.hidden import judge
from reflect.tasks.extract import extract_code
from reflect.tasks.task import Task

DRAFT_ROLES = ("generator", "refiner")  # the roles whose replies are drafts


@dataclass
class Draft:
    """One draft: the request that produced it, the reply, and the code in it."""

    role: str
    messages: list[dict]
    reply: str
    code: str


@dataclass
class DraftLog:
    """`chat(messages, role, **params)` that passes every call to `chat` and keeps each draft (a
    generator or refiner reply) in order; the hidden tests judge them only when asked."""

    chat: Callable
    task: Task
    drafts: list[Draft] = field(default_factory=list)
    _verdicts: list[str] = field(default_factory=list, repr=False)  # the drafts judged so far

    def __call__(self, messages: list[dict], role: str = "generator", **params):
        reply = self.chat(messages, role=role, **params)
        if role in DRAFT_ROLES:
            code = extract_code(reply.text, self.task.entry_point).code
            self.drafts.append(Draft(role, [dict(m) for m in messages], reply.text, code))
        return reply

    def verdicts(self) -> list[str]:
        """The hidden tests on each draft, in order: 'pass' or 'FAIL' (each draft judged once)."""
        for d in self.drafts[len(self._verdicts) :]:
            self._verdicts.append("pass" if judge(self.task, d.code).passed else "FAIL")
        return list(self._verdicts)

    def unchanged(self) -> int:
        """How many drafts repeat the draft before them, code for code."""
        codes = [d.code.strip() for d in self.drafts]
        return sum(a == b for a, b in zip(codes, codes[1:], strict=False))

    def line(self) -> str:
        """One line: the task, the hidden tests per draft, and the drafts sent back unchanged."""
        return (
            f"{self.task.id:<16} hidden tests per draft: {self.verdicts()}, "
            f"{self.unchanged()} sent back unchanged"
        )

    def section(self, k: int, width: int = 300) -> str:
        """Draft k (1 for the first): what its request's last message said, the hidden verdict, and the
        code (the first draft) or the diff to the draft before."""
        d, verdict = self.drafts[k - 1], self.verdicts()[k - 1]
        asked = " ".join(str(d.messages[-1].get("content", "")).split())
        out = [
            f"--- draft {k} ({d.role}), hidden tests: {verdict}",
            f"    asked: {asked[:width]}{'...' if len(asked) > width else ''}",
        ]
        if k == 1:
            return "\n".join(out + ["    " + line for line in d.code.strip().splitlines()])
        before = self.drafts[k - 2].code
        diff = list(
            difflib.unified_diff(
                before.strip().splitlines(), d.code.strip().splitlines(), lineterm="", n=0
            )
        )[2:]
        return "\n".join(
            out + (["    " + line for line in diff] or ["    (the same code as the draft before)"])
        )

    def show(self, width: int = 300) -> str:
        """Every draft in turn (`section`)."""
        return "\n".join(self.section(k, width) for k in range(1, len(self.drafts) + 1))


@dataclass
class Sweep:
    """A loop run on many tasks through a `DraftLog` each: the drafts, and whether the code it returned
    passed the hidden tests."""

    logs: dict[str, DraftLog]
    final: dict[str, bool]

    @property
    def rejected(self) -> list[str]:
        """The tasks whose first draft the loop did not keep: it wrote more than one."""
        return [tid for tid, log in self.logs.items() if len(log.drafts) > 1]

    @property
    def repaired(self) -> list[str]:
        """The tasks whose first draft failed the hidden tests and whose returned code passes them."""
        return [
            tid
            for tid, log in self.logs.items()
            if log.drafts and log.verdicts()[0] == "FAIL" and self.final[tid]
        ]

    def report(self) -> str:
        """One line per rejected task (its drafts' hidden verdicts), then the rates over the tasks."""
        failed = [
            tid for tid, log in self.logs.items() if log.drafts and log.verdicts()[0] == "FAIL"
        ]
        rejected_failed = [tid for tid in self.rejected if tid in failed]
        n = len(self.logs)
        return "\n".join(
            [
                *(
                    f"{self.logs[tid].line()} -> returned: {'pass' if self.final[tid] else 'FAIL'}"
                    for tid in self.rejected
                ),
                f"{len(self.rejected)} of {n} first drafts rejected; a later draft passed the hidden tests on "
                f"{len(self.repaired)} of the {len(rejected_failed)} rejected that failed them. The loop ends at "
                f"{sum(self.final.values())} of {n}, its first drafts at {n - len(failed)} of {n}",
            ]
        )


def sweep(run: Callable, chat: Callable, tasks: list[Task]) -> Sweep:
    """`run(chat, task)` (a loop, returning the code it keeps) on every task, one at a time, each through
    its own DraftLog of `chat`; the hidden tests judge the code it returned."""
    logs, final = {}, {}
    for task in tasks:
        logs[task.id] = DraftLog(chat, task)
        final[task.id] = judge(task, run(logs[task.id], task)).passed
    return Sweep(logs, final)
