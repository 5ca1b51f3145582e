"""Evaluators a scored reflection loop can use, side by side, each returning an `Evaluation` (a 1-10 score,
feedback for the refiner, its token cost): LLMCritic, RuleCritic, HybridCritic, TestGroundedCritic,
VotingCritic and EvidenceCritic (docs/package.md, "The modules in detail").
"""

from __future__ import annotations

import ast
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

from ..model.llm import response_format_for
from ..model.roles import SAMPLING, SEED
from ..records import parse_python, parsed
from ..tasks.prompts import CRITIC_PROMPT, VOTER_PROMPTS, critic_repair_request, review_request
from ..tasks.task import Task
from .critique import Critique, critique_schema, parse_critique
from .self_tests import gather_evidence, run_self_tests

_CODE_CRITERIA = (
    "syntax errors",
    "runtime errors",
    "edge cases (empty input, negatives, invalid values)",
    "correctness against every stated requirement",
    "security (eval/exec on input, shell calls)",
    "performance",
    "readability (names, docstring, type hints)",
)


GENERIC_TEXT_CRITERIA = ("clarity", "accuracy", "completeness")
MEDICAL_CRITERIA = (
    "it must recommend seeing a doctor or pharmacist, and say when to seek urgent care",
    "no invented statistics, studies or doses",
    "no diagnosis of the reader",
    "plain language a patient understands",
    "accurate general information only",
)


@dataclass
class Evaluation:
    """A critic's verdict: score 1-10 (None if unusable), feedback for the refiner, what it cost.

    The fields are what a loop reads; `detail` is what a lesson shows (the parsed critique, each
    vote, the sandbox result) and no loop reads it.
    `permanent`: an unusable verdict that another draft would not change (no evidence for the task)."""

    score: float | None  # 1-10; None when the critic's reply could not be used
    feedback: str
    # what the critic's model calls cost: (prompt tokens, completion tokens, calls)
    usage: tuple[int, int, int] = (0, 0, 0)
    detail: dict = field(default_factory=dict)
    permanent: bool = False
    raw: str | None = None  # the model's last reply, where a model critic wrote one

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens of the critic's model calls."""
        return self.usage[0] + self.usage[1]


@dataclass
class LLMCritic:
    """A model critic that returns a validated JSON critique (one repair request at most)."""

    chat: Callable
    criteria: tuple[str, ...] = _CODE_CRITERIA
    system_prompt: str = CRITIC_PROMPT
    structured: bool = True  # ask the server to constrain decoding to the schema
    max_repairs: int = 1
    # a cap on the critic's reply (a cut-off reply is a parse failure)
    max_tokens: int | None = None
    name: str = "llm"

    def messages(self, task: Task | str, code: str) -> list[dict]:
        """The critic's request: its system prompt with the criteria, then the task and the draft."""
        return [
            {
                "role": "system",
                "content": self.system_prompt.format(criteria="; ".join(self.criteria)),
            },
            {"role": "user", "content": review_request(task, code)},
        ]

    def evaluate(self, task: Task | str, code: str) -> Evaluation:
        """Judge `code` for `task`; with a string `task`, judge the answer `code` to that question."""
        messages = self.messages(task, code)
        params = dict(SAMPLING["critic"])  # temperature 0
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        if self.structured:
            params["response_format"] = response_format_for(critique_schema(), "critique")
        usage = (0, 0, 0)  # prompt tokens, completion tokens, calls
        for attempt in range(self.max_repairs + 1):
            reply = self.chat(messages, role="critic", **params)
            usage = (
                usage[0] + reply.prompt_tokens,
                usage[1] + reply.completion_tokens,
                usage[2] + 1,
            )
            parsed = parse_critique(reply.text)
            if isinstance(parsed, Critique):
                return Evaluation(
                    parsed.score,
                    _feedback(parsed),
                    usage,
                    {"critique": parsed, "repairs": attempt},
                    raw=reply.text,
                )
            if attempt < self.max_repairs:
                messages = messages + [
                    {"role": "assistant", "content": reply.text},
                    {"role": "user", "content": critic_repair_request(parsed.error)},
                ]
        return Evaluation(
            None,
            f"The critic's reply was unusable ({parsed.error}).",
            usage,
            {"failure": parsed, "repairs": self.max_repairs},
            raw=reply.text,
        )


def _feedback(c: Critique) -> str:
    issues = "\n".join(f"- {i}" for i in c.issues) or "- none"
    return f"Score {c.score}/10.\nIssues:\n{issues}\nMost important fix: {c.suggestion}"


@dataclass
class RuleCritic:
    """The static ast checks as a critic: no model, score from the share of checks passed."""

    name: str = "rules"

    def evaluate(self, task: Task, code: str) -> Evaluation:
        """Score `code` by the task's static checks."""
        checks = task.static_checks(code)
        failed = [c for c in checks if not c.passed]
        score = 1 + 9 * (len(checks) - len(failed)) / len(checks)
        text = (
            "All static checks pass."
            if not failed
            else "Static checks failed:\n" + "\n".join(f"- {c.reason}" for c in failed)
        )
        return Evaluation(round(score, 1), text, detail={"checks": checks})


@dataclass
class HybridCritic:
    """Rules for form, the LLM for content; a failed rule caps the score."""

    llm: LLMCritic
    rules: RuleCritic = field(default_factory=RuleCritic)
    cap: float = 5
    name: str = "hybrid"

    def evaluate(self, task: Task, code: str) -> Evaluation:
        """Run the rules, then (if the code parses) the LLM critic."""
        r = self.rules.evaluate(task, code)
        if not r.detail["checks"][0].passed:  # run_checks puts `parses` first
            # does not parse: no need to ask a model
            return Evaluation(1, r.feedback, detail={"rules": r})
        m = self.llm.evaluate(task, code)
        score = m.score
        if score is not None and r.score < 10:
            score = min(score, self.cap)
        # rules speak only when they fail
        feedback = m.feedback if r.score == 10 else f"{r.feedback}\n{m.feedback}"
        return Evaluation(score, feedback, m.usage, {"rules": r, "llm": m})


def split_tests(tests: str, visible_share: float = 0.5) -> tuple[str, str]:
    """(visible, held_out): the first share of the test steps the sandbox runs, and the rest.

    Steps are the top-level statements, or, for a HumanEval-style test file, the statements
    in the body of `check(candidate)`; each half keeps the file's other top-level lines
    (imports, METADATA) and its own `check` function."""
    tree = parse_python(tests)
    check = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"), None
    )
    if check is None:
        steps = [ast.get_source_segment(tests, n) or ast.unparse(n) for n in tree.body]
        k = max(1, round(len(steps) * visible_share))
        return "\n".join(steps[:k]) + "\n", "\n".join(steps[k:]) + "\n"
    head = "\n".join(
        ast.get_source_segment(tests, n) or ast.unparse(n) for n in tree.body if n is not check
    )
    lines = tests.splitlines()
    steps = ["\n".join(lines[n.lineno - 1 : n.end_lineno]) for n in check.body]  # indentation kept
    k = max(1, round(len(steps) * visible_share))

    def part(body: list[str]) -> str:
        return (
            f"{head}\n\ndef check(candidate):\n" + "\n".join(body) + "\n" if body else head + "\n"
        )

    return part(steps[:k]), part(steps[k:])


def critic_view(code: str) -> str:
    """The code as a critic should read it: no comments and no docstrings, where a draft can talk to its
    reviewer (lesson 03b's injection and gaming), and otherwise the same program (`ast.unparse`: layout and
    quotes may change, behaviour does not). A body left empty gets `pass`; code that does not parse is
    returned as it is."""
    tree = parsed(code)
    if tree is None:
        return code
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                node.body = node.body[1:] or (
                    [ast.Pass()] if not isinstance(node, ast.Module) else []
                )
    return ast.unparse(tree) + "\n"


@dataclass
class TestGroundedCritic:
    """Runs the visible share of the tests in the sandbox and quotes the failures."""

    __test__ = False  # not a pytest class
    visible_share: float = 0.5
    name: str = "tests"

    def evaluate(self, task: Task, code: str) -> Evaluation:
        """Score `code` by the share of visible test steps it passes."""
        visible, _ = split_tests(task.tests, self.visible_share)
        res = task.run(code, tests=visible)
        n = len(res.tests) or 1
        score = 1 + 9 * res.n_passed / n if res.tests else 1
        return Evaluation(round(score, 1), res.feedback(label="visible"), detail={"result": res})


@dataclass
class VotingCritic:
    """Several LLM critics with different prompts: the mean score, the spread (highest minus lowest), the harshest feedback."""

    chat: Callable
    prompts: tuple[str, ...] = VOTER_PROMPTS
    name: str = "voting"

    def evaluate(self, task: Task, code: str) -> Evaluation:
        """Ask every voter and combine their scores."""
        votes = [LLMCritic(self.chat, system_prompt=p).evaluate(task, code) for p in self.prompts]
        usable = [v.score for v in votes if v.score is not None]
        usage = tuple(sum(v.usage[i] for v in votes) for i in range(3))
        if not usable:
            return Evaluation(None, "No voter gave a usable score.", usage, {"votes": votes})
        # the exact mean of the usable scores; the spread is highest minus lowest (None without two)
        spread = float(max(usable) - min(usable)) if len(usable) > 1 else None
        harshest = min((v for v in votes if v.score is not None), key=lambda v: v.score)
        detail = {"votes": votes, "scores": usable, "spread": spread}
        return Evaluation(round(statistics.mean(usable), 2), harshest.feedback, usage, detail)


_EVIDENCE_SOURCES = ("examples", "self-tests")


@dataclass
class EvidenceCritic:
    """Scores a draft by the share of evidence asserts it passes (1-10) and gives the trace as
    feedback. `source="examples"`: the statement's own examples (`statement_asserts`; no
    model call). `source="self-tests"`: asserts the model writes from the statement (one
    test-writer call, on the first evaluation, then reused: build one critic per task).

    No asserts is no evidence: the score is None (unusable), with the reason, never a guess, and
    `permanent` tells a loop that another draft would not change that."""

    chat: Callable | None = field(default=None, repr=False)
    source: str = "self-tests"
    seed: int | None = SEED
    name: str = "evidence"
    _asserts: dict = field(default_factory=dict, repr=False)  # task id -> asserts

    def __post_init__(self):
        if self.source not in _EVIDENCE_SOURCES:
            raise ValueError(f"source must be one of {_EVIDENCE_SOURCES}, got {self.source!r}")

    def asserts(self, task: Task) -> tuple[list[str], tuple[int, int, int]]:
        """The evidence for `task` and what getting it cost now: (prompt, completion tokens, calls)."""
        if task.id in self._asserts:
            return self._asserts[task.id], (0, 0, 0)
        found, reply = gather_evidence(self.chat, task, self.source, self.seed)
        usage = (0, 0, 0) if reply is None else (reply.prompt_tokens, reply.completion_tokens, 1)
        self._asserts[task.id] = found
        return found, usage

    def evaluate(self, task: Task, code: str) -> Evaluation:
        """Run the draft on the evidence in the sandbox."""
        asserts, usage = self.asserts(task)
        if not asserts:
            return Evaluation(
                None,
                f"No evidence: the {self.source} gave no usable assert.",
                usage,
                permanent=True,
            )  # a loop cannot revise its way to evidence
        res = run_self_tests(task, code, asserts)
        score = 1 + 9 * len(res.passed) / len(asserts)
        return Evaluation(round(score, 1), res.trace(), usage, {"result": res})


def course_critics(chat: Callable) -> dict[str, object]:
    """Lesson 03b's five evaluators, on one chat: the JSON critic, the static rules, the hybrid of both, the visible
    tests, and three voting critic prompts."""
    llm = LLMCritic(chat)
    return {
        "llm": llm,
        "rules": RuleCritic(),
        "hybrid": HybridCritic(llm),
        "tests": TestGroundedCritic(),
        "voting": VotingCritic(chat),
    }
