"""Lesson 02's loop, maker-checker: it returns a `Run` with every turn as a step; it never prints.

`maker_checker` is the pattern as it is usually taught: a Code Generator and a Code Reviewer
alternate on one shared conversation thread; each sees its own system prompt plus the shared
messages; replies are appended as assistant messages prefixed `[Generator]:` / `[Reviewer]:`;
the loop stops when the review starts with APPROVED or after MAX_ITERATIONS rounds (the
result is then the last version, marked not approved). Extras over the textbook version:
a token budget, a strict sentinel reading, an optional thread trimmer, and errors that end
the loop with everything kept instead of losing the run.

`perspective="own"` is the fix for the textbook thread's role confusion: each role sees its own
turns as `assistant` and the other role's as `user`, without name prefixes (LangGraph's
reflection tutorial hands the critique back as a human turn; AutoGen maps the other agent's
messages to `user`). Each step records the last message its role was sent, and the reply as written.
"""

from __future__ import annotations

from collections.abc import Callable

from ..judging.controller import StopRule
from ..judging.sentinel import ApprovalRule, strict_sentinel
from ..model.llm import ModelError
from ..records import ChatFn, ReplyLike, Run, Step, Stop, Verdict, model_step
from ..tasks.extract import extract_code
from ..tasks.prompts import GENERATOR_PROMPT, REVIEWER_PROMPT

MAX_ITERATIONS = 4


PERSPECTIVES = ("shared", "own")


def role_view(thread: list[dict], authors: list[str], role: str) -> list[dict]:
    """The thread as `role` sees it under perspective "own": its turns as assistant, the other
    role's as user (prefix removed), consecutive user messages joined into one."""
    view: list[dict] = []
    for message, author in zip(thread, authors, strict=True):
        mine = author == role
        text = message["content"]
        if author in ("generator", "reviewer"):
            text = text.removeprefix(f"[{author.title()}]: ")
        kind = "assistant" if mine else "user"
        if view and view[-1]["role"] == kind == "user":
            view[-1] = {"role": "user", "content": f"{view[-1]['content']}\n\n{text}"}
        else:
            view.append({"role": kind, "content": text})
    return view


def maker_checker(
    chat: ChatFn,
    task: str,
    *,
    max_iterations: int = MAX_ITERATIONS,
    is_approved: ApprovalRule = strict_sentinel,
    token_budget: int | None = None,
    generator_prompt: str = GENERATOR_PROMPT,
    reviewer_prompt: str = REVIEWER_PROMPT,
    entry_point: str | None = None,
    trim: Callable[[list[dict]], list[dict]] | None = None,
    perspective: str = "shared",
    task_id: str = "task",
    name: str = "maker-checker",
) -> Run:
    """Run the generator/reviewer loop on one shared thread (see module docstring).

    `chat(messages, role=...)` makes one model call. `trim`, if given, maps the shared thread
    to the messages actually sent (every turn is kept as a step either way).
    `perspective` is "shared" (the textbook: every turn an assistant message with a name
    prefix) or "own" (each role sees its own turns as assistant, the other's as user).
    Returns a `Run` named `name` for `task_id`: one step per turn (a generator's draft, a review
    whose verdict is its APPROVED or not), the last draft with code as the final code, and why it
    stopped (`StopRule.decide` with the reviewer as the judge). The token budget is checked
    before each call: a call that would pass it (estimated as the largest call of the same role
    so far) is not made, and the run stops with what it has.
    """
    if perspective not in PERSPECTIVES:
        raise ValueError(f"perspective must be one of {PERSPECTIVES}, got {perspective!r}")
    if not task or not task.strip():
        raise ValueError("The task is blank: give the generator something to write.")
    if max_iterations < 1:
        raise ValueError(f"max_iterations must be at least 1, got {max_iterations}")
    if token_budget is not None and token_budget < 1:
        raise ValueError(f"token_budget must be at least 1 token, got {token_budget}")
    thread: list[dict] = [{"role": "user", "content": task}]
    authors = ["task"]  # who wrote each message of the thread
    steps: list[Step] = []
    code = ""
    used = 0

    def call(role: str, system: str) -> tuple[list[dict], ReplyLike]:
        nonlocal used
        seen = role_view(thread, authors, role) if perspective == "own" else thread
        sent = trim(seen) if trim else seen
        messages = [{"role": "system", "content": system}, *sent]
        reply = chat(messages, role=role)
        used += reply.prompt_tokens + reply.completion_tokens
        return messages, reply

    def would_pass_budget(role: str) -> bool:
        # spent already, or the next call of `role` costing what its largest one did would pass it
        if token_budget is None:
            return False
        costs = [s.prompt_tokens + s.completion_tokens for s in steps if s.role == role]
        return used >= token_budget or used + max(costs, default=0) > token_budget

    rule = StopRule.judged(max_iterations)

    def result(stop: Stop, error: str | None = None) -> Run:
        return Run(
            name,
            task_id,
            code,
            stop,
            tuple(steps),
            "the last draft (maker-checker keeps the last version)",
            error=error,
        )

    while True:
        if would_pass_budget("generator"):
            return result(Stop.TOKEN_BUDGET)
        try:
            sent, gen = call("generator", generator_prompt)
        except ModelError as err:
            return result(Stop.PROVIDER_ERROR, f"generator call failed: {err}")
        extraction = extract_code(gen.text, entry_point)
        code = extraction.code if extraction.found else code  # keep the last real draft
        thread.append({"role": "assistant", "content": f"[Generator]: {gen.text}"})
        authors.append("generator")
        steps.append(
            model_step(
                len(steps),
                "generator",
                sent,
                gen,
                extraction.code,
                note=None if extraction.found else extraction.reason,
            )
        )
        if would_pass_budget("reviewer"):
            return result(Stop.TOKEN_BUDGET)
        try:
            sent, review = call("reviewer", reviewer_prompt)
        except ModelError as err:
            return result(Stop.PROVIDER_ERROR, f"reviewer call failed: {err}")
        text = review.text or ""
        ok = bool(text.strip()) and is_approved(text)
        thread.append({"role": "assistant", "content": f"[Reviewer]: {text}"})
        authors.append("reviewer")
        steps.append(
            model_step(
                len(steps),
                "reviewer",
                sent,
                review,
                verdict=Verdict("approved" if ok else "not approved", ok),
                note=None if text.strip() else "empty review",
            )
        )
        stop = rule.decide(steps)
        if stop:
            return result(stop)


def keep_last(n: int) -> Callable[[list[dict]], list[dict]]:
    """A thread trimmer: the task plus the last `n` messages (drop older rounds)."""
    if n < 1:
        raise ValueError("keep at least one message besides the task")
    return lambda thread: thread[:1] + thread[1:][-n:]
