"""Lesson 01's exercise checks: pass rate per difficulty, a stricter prompt, best of three without the oracle."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from ...judging.critics import TestGroundedCritic
from ...judging.hidden import Attempt, judge
from ...model.accounting import CallRecord
from ...model.llm import Reply
from ...strategies.maker_checker import GENERATOR_PROMPT, generator_messages
from ...tasks.extract import extract_code
from ...tasks.task import Task, get_task
from . import exercise

LEVELS = ("easy", "medium", "hard")
HOT = {"temperature": 0.8, "max_tokens": 512}  # exercise 3's sampling: the first draft's cap, a hot temperature
SEEDS = (1, 2, 3)


def _is_attempt(a: object) -> bool:
    return isinstance(a, Attempt)


def _unaccounted(found: Sequence[Attempt], earlier: Sequence[Attempt], records: Sequence[CallRecord]) -> list[Attempt]:
    """The attempts in `found` that no generator call of the ledger accounts for, once the calls of
    `earlier` (the baseline) are set aside: a call is matched by its prompt and completion tokens,
    and each call accounts for one attempt only."""
    calls = Counter((r.prompt_tokens, r.completion_tokens) for r in records if r.role == "generator")
    calls.subtract(Counter((a.prompt_tokens, a.completion_tokens) for a in earlier))
    missing = []
    for a in found:
        key = (a.prompt_tokens, a.completion_tokens)
        if calls[key] > 0:
            calls[key] -= 1
        else:
            missing.append(a)
    return missing


def _failed_ids(attempts: Sequence[Attempt]) -> list[str]:
    return [a.task_id for a in attempts if not a.passed]


@exercise("01.1", hints=(
    "every Attempt has a .difficulty: group the attempts by it, then take the share that passed in each group.",
    "pass_rate(list_of_attempts) is that share, between 0 and 1: call it on the attempts of one level at a time.",
), answer="rate_by_level = {level: pass_rate([a for a in attempts if a.difficulty == level])\n"
          "                 for level in ('easy', 'medium', 'hard')}")
def per_level(rate_by_level: dict[str, float] | None, attempts: Sequence[Attempt]) -> tuple[bool, str]:
    """Exercise 1: one pass rate (a share between 0 and 1) per difficulty, from the baseline's attempts."""
    if not isinstance(rate_by_level, dict):
        return False, f"rate_by_level should be a dict, not {type(rate_by_level).__name__}."
    if set(rate_by_level) != set(LEVELS):
        return False, f"rate_by_level's keys should be {list(LEVELS)}, not {sorted(rate_by_level)}."
    for level in LEVELS:
        group = [a for a in attempts if a.difficulty == level]
        want = sum(a.passed for a in group) / len(group) if group else 0.0
        got = rate_by_level[level]
        if not isinstance(got, (int, float)) or isinstance(got, bool) or abs(got - want) > 1e-9:
            if not isinstance(got, (int, float)) or not 0 <= got <= 1:
                return False, f"rate_by_level[{level!r}] is {got!r}: a pass rate is a share between 0 and 1."
            return False, (f"rate_by_level[{level!r}] = {got:.3f} is not the share of the {len(group)} {level} "
                           "attempts that passed.")
    shown = ", ".join(f"{level} {rate_by_level[level]:.0%}" for level in LEVELS)
    return True, f"Per-level pass rates match: {shown}."


@exercise("01.2", hints=(
    "the failed tasks are the attempts with a.passed False, in the order of `attempts`; get_task(a.task_id) gives "
    "each task back.",
    "one_shot(chat, task, system_prompt=CAREFUL_PROMPT) makes one new call with your prompt (the `chat` of section 2 "
    "keeps temperature 0, seed 42 and 512 tokens); conn.map runs it over a list of tasks, in order.",
), answer="CAREFUL_PROMPT = GENERATOR_PROMPT + (\n"
          "    ' Before you answer, check your code against every listed requirement and every edge case it names'\n"
          "    ' (empty input, negative numbers, invalid values that must raise).'\n)\n"
          "failed = [get_task(a.task_id) for a in attempts if not a.passed]\n"
          "retry = conn.map(lambda t: one_shot(chat, t, system_prompt=CAREFUL_PROMPT), failed)")
def stricter_prompt(careful_prompt: str | None, retry: Sequence[Attempt] | None, attempts: Sequence[Attempt],
                    records: Sequence[CallRecord]) -> tuple[bool, str]:
    """Exercise 2: the failed tasks re-run by new calls, each with the same new system prompt.

    The evidence is in the tokens: a new system prompt changes every request's prompt tokens by the
    same amount (the task's message is unchanged), and every new attempt is a call the ledger holds
    beyond the baseline's."""
    if not isinstance(careful_prompt, str) or not careful_prompt.strip():
        return False, "CAREFUL_PROMPT should be your system prompt, a non-empty string."
    if careful_prompt.strip() == GENERATOR_PROMPT.strip():
        return False, "CAREFUL_PROMPT is the course's GENERATOR_PROMPT: write a stricter one."
    if not isinstance(retry, (list, tuple)) or not all(_is_attempt(a) for a in retry):
        return False, f"retry should be a list of Attempt (what one_shot returns), not {type(retry).__name__}."
    want = _failed_ids(attempts)
    got = [a.task_id for a in retry]
    if got != want:
        return False, f"retry covers {got}; the failed tasks, in order, are {want}."
    missing = _unaccounted(retry, attempts, records)
    if missing:
        return False, (f"no model call in the ledger accounts for the retry of {[a.task_id for a in missing]}: "
                       "each attempt in retry should come from a new one_shot call (the baseline's attempts, or "
                       "copies of them, do not count).")
    before = {a.task_id: a for a in attempts}
    shift = {a.task_id: a.prompt_tokens - before[a.task_id].prompt_tokens for a in retry}
    if len(set(shift.values())) > 1:
        return False, (f"the retries' prompts grew by {shift} tokens: one system prompt for every task changes "
                       "them all by the same amount. Change the system prompt only, the same for every task.")
    delta = next(iter(shift.values()), 0)
    if delta == 0:
        return False, ("new calls, but with the same prompt tokens as the baseline: they were sent with the "
                       "course's GENERATOR_PROMPT, not with CAREFUL_PROMPT (system_prompt=...).")
    fixed = sum(a.passed for a in retry)
    return True, (f"Re-ran all {len(retry)} failed tasks with your prompt ({delta:+d} prompt tokens per call, new "
                  f"calls); {fixed} of {len(retry)} now pass. Compare with lesson 02's loop.")


def _fenced(code: str) -> str:
    return f"```python\n{code}```"


FACT_GOOD = ('def calculate_factorial(n):\n    """n! for a non-negative integer n."""\n    if n < 0:\n'
             '        raise ValueError(n)\n    return 1 if n < 2 else n * calculate_factorial(n - 1)\n')
FACT_VISIBLE_ONLY = "def calculate_factorial(n):\n    return 1 if n < 2 else n * calculate_factorial(n - 1)\n"  # no raise, no docstring
FACT_BAD = "def calculate_factorial(n):\n    return n\n"


class _FakeChat:
    """A chat that answers without a model, by seed, and keeps what each call asked for."""

    def __init__(self, replies: dict[int, str]) -> None:
        self.replies, self.calls, self._lock = replies, [], threading.Lock()

    def __call__(self, messages: list[dict], role: str = "generator", **params: Any) -> Reply:
        with self._lock:
            self.calls.append({"messages": messages, "role": role, **params})
        text = self.replies.get(params.get("seed"), "I cannot answer that.")
        return Reply(text, role, "fake", 100, 40, 0.0, "stop")


def _check_sampler(sample_three: Callable[[Any, Task], Sequence[Attempt]]) -> str:
    """What is wrong with sample_three on a fake chat and a made-up task ("" when nothing is)."""
    task = get_task("factorial")
    codes = {1: FACT_BAD, 2: FACT_GOOD, 3: FACT_VISIBLE_ONLY}
    fake = _FakeChat({s: _fenced(c) for s, c in codes.items()})
    out = sample_three(fake, task)
    if not fake.calls and out is None:
        return "sample_three returned None: it is not written yet."
    if not fake.calls:
        return "sample_three never called the chat it was given (use its `chat` argument, not conn.chat or hot)."
    if len(fake.calls) != 3:
        return f"sample_three called its chat {len(fake.calls)} times; it should draw 3 drafts."
    temps = [c.get("temperature") for c in fake.calls]
    if any(t != HOT["temperature"] for t in temps):
        return f"sample_three sampled at temperature {temps}; the exercise asks for 0.8 on every draw."
    seeds = [c.get("seed") for c in fake.calls]
    if sorted(s for s in seeds if isinstance(s, int)) != list(SEEDS) or len(seeds) != 3:
        return f"sample_three used the seeds {seeds}; the exercise asks for 1, 2 and 3."
    caps = [c.get("max_tokens") for c in fake.calls]
    if any(m != HOT["max_tokens"] for m in caps):
        return f"sample_three capped the replies at max_tokens {caps}; keep the first draft's 512."
    want_messages = generator_messages(task.prompt(), GENERATOR_PROMPT)
    if any(c["messages"] != want_messages for c in fake.calls):
        return ("sample_three did not send the task it was given with the first draft's prompt "
                "(one_shot(chat_at_one_seed, task)).")
    if not isinstance(out, (list, tuple)) or len(out) != 3 or not all(_is_attempt(a) for a in out):
        return "sample_three should return a list of the 3 attempts one_shot made."
    want_codes = [extract_code(_fenced(codes[s]), task.entry_point).code for s in SEEDS]
    if [a.code for a in out] != want_codes:
        return "sample_three returned its attempts out of seed order: seed 1's first, then 2, then 3."
    return ""


def _check_pick(pick: Callable[[Task, Sequence[Attempt]], Attempt]) -> str:
    """What is wrong with pick on made-up factorial drafts ("" when nothing is)."""
    task = get_task("factorial")
    good, twin, visible_only, bad, empty = (judge(task, c) for c in
                                            (FACT_GOOD, FACT_GOOD, FACT_VISIBLE_ONLY, FACT_BAD, ""))
    names = {id(good): "a right one", id(twin): "its twin", id(visible_only): "one that passes only the visible tests",
             id(bad): "a wrong one", id(empty): "an empty one"}

    def said(d: object) -> str:
        return names.get(id(d), repr(d)[:60])

    got = pick(task, [good, twin])
    if got is not good:
        return (f"on two made-up factorial drafts with the same code, pick returned {said(got)}; it should return "
                "the earliest draft on a tie.")
    got = pick(task, [visible_only, good])
    if got is good:
        return ("pick chose the draft that passes the hidden tests over an earlier one that scores as high on the "
                "visible tests: it used evidence it will not have at run time (.passed, judge, task.run). "
                "Score with the visible tests only.")
    for drafts, want, what in (([bad, good, empty], good, "the best visible score"),
                               ([empty, bad], bad, "the best visible score, however low"),
                               ([good, twin], good, "the earliest draft on a tie"),
                               ([visible_only, good], visible_only, "the earliest draft on a tie"),
                               ([bad, visible_only], visible_only, "the best visible score")):
        got = pick(task, drafts)
        if got is not want:
            return (f"on made-up factorial drafts [{', '.join(said(d) for d in drafts)}], pick returned "
                    f"{said(got)}; it should return {what}: {said(want)}.")
    return ""


@exercise("01.3", hints=(
    "sample_three: one one_shot per seed, each with a chat whose temperature, seed and max_tokens are fixed "
    "(functools.partial fixes keyword arguments). pick: the visible tests are TestGroundedCritic's.",
    "partial(chat, temperature=0.8, seed=s, max_tokens=512) is a chat at one seed. "
    "TestGroundedCritic().evaluate(task, d.code).score scores one draft; pick may not look at .passed, judge or "
    "task.run: those are the hidden tests, which a program does not have when it chooses.",
    "scores.index(max(scores)) is the earliest best. any_passes may use .passed: it measures, it does not choose.",
), answer="first_failed = get_task(next(a.task_id for a in attempts if not a.passed))\n\n\n"
          "def sample_three(chat, task):\n"
          "    return [one_shot(partial(chat, temperature=0.8, seed=s, max_tokens=512), task) for s in (1, 2, 3)]\n\n\n"
          "def pick(task, drafts):\n"
          "    scores = [TestGroundedCritic().evaluate(task, d.code).score for d in drafts]\n"
          "    return drafts[scores.index(max(scores))]\n\n\n"
          "draws = sample_three(conn.chat, first_failed)\n"
          "any_passes = any(a.passed for a in draws)\n"
          "chosen = pick(first_failed, draws)")
def best_of_three(sample_three: Callable[[Any, Task], Sequence[Attempt]], draws: Sequence[Attempt] | None,
                  any_passes: bool | None, pick: Callable[[Task, Sequence[Attempt]], Attempt],
                  chosen: Attempt | None, attempts: Sequence[Attempt],
                  records: Sequence[CallRecord]) -> tuple[bool, str]:
    """Exercise 3: sample_three on a fake chat (temperature 0.8, seeds 1-3), pick on made-up drafts
    (visible tests only, never the oracle), then the real draws, any_passes and chosen."""
    problem = _check_sampler(sample_three)
    if problem:
        return False, problem
    problem = _check_pick(pick)
    if problem:
        return False, problem
    first_id = _failed_ids(attempts)[0]
    if draws is None:
        return False, "sample_three and pick are right; now keep sample_three(conn.chat, first_failed) in draws."
    if not isinstance(draws, (list, tuple)) or len(draws) != 3 or not all(_is_attempt(a) for a in draws):
        return False, "draws should hold the 3 attempts that sample_three(conn.chat, first_failed) returns."
    if {a.task_id for a in draws} != {first_id}:
        return False, f"draws are attempts of {[a.task_id for a in draws]}; the first failed task is {first_id!r}."
    missing = _unaccounted(draws, attempts, records)
    if missing:
        return False, (f"no new call in the ledger made {len(missing)} of the draws: they are the temperature-0 "
                       "draft again (or copies), not three samples; sample_three(conn.chat, first_failed) makes them.")
    truth = any(a.passed for a in draws)
    if not isinstance(any_passes, bool) or any_passes != truth:
        return False, f"any_passes is {any_passes!r}: it should say whether any of the 3 draws passes the hidden tests."
    task = get_task(first_id)
    scores = [TestGroundedCritic().evaluate(task, a.code).score for a in draws]
    best = scores.index(max(scores))
    if chosen is not draws[best]:
        if not any(chosen is a for a in draws):
            return False, "chosen should be one of the draws (the very object), the one pick(first_failed, draws) returns."
        return False, (f"chosen is not the draft pick chooses: the visible scores are {scores}, so it is draw "
                       f"{best + 1} (seed {SEEDS[best]}).")
    passing = [str(SEEDS[i]) for i, a in enumerate(draws) if a.passed]
    who = ("no draft passes" if not passing else f"seed {passing[0]}'s draft passes" if len(passing) == 1
           else f"the drafts of seeds {', '.join(passing)} pass")
    verdict = "passes" if chosen.passed else "fails"
    return True, (f"any_passes = {any_passes}: {who} the hidden tests. The visible tests scored the draws "
                  f"{scores} and chose seed {SEEDS[best]}'s draft, which {verdict} the hidden tests.")
