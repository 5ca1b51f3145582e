"""Lesson 05: Reflexion, verbal feedback remembered across attempts (and sessions). A generator writes a fresh
attempt, an evaluator judges it from the agent's own tests, a reflector writes what to do next time; the next
attempt's prompt carries the last `window` reflections, as its `memory_mode` says (docs/package.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..judging.controller import Draft, best_so_far, drafts_of, over_budget
from ..judging.critics import Evaluation
from ..judging.self_tests import evidence_step, run_tests_step
from ..memory.store import Episode, MemoryStore, task_key
from ..model.llm import ModelError
from ..model.roles import SAMPLING, SEED
from ..records import Run, Step, Stop, Verdict, model_step
from ..tasks.extract import extract_code
from ..tasks.prompts import (
    EVALUATOR_SYSTEM,
    GENERATOR_PROMPT,
    REFLECTOR_SYSTEM,
    WRITE_TESTS_SYSTEM,
    attempt_request,
    evaluator_messages,
    generator_messages,
    reflection_messages,
)
from ..tasks.task import Task
from .base import execute

MEMORY_MODES = ("none", "last", "reflections", "last+reflections")
_READS_LAST = ("last", "last+reflections")  # modes whose prompt carries the previous attempt's code
_READS_REFLECTIONS = (
    "reflections",
    "last+reflections",
)  # modes whose prompt carries the reflections


def parse_judgement(text: str) -> Evaluation:
    """The evaluator's verdict as an `Evaluation`: the first JSON object in `text` that has a score in
    [0, 1] and a pass/fail verdict; its `feedback` is the specific issues and missing elements, joined
    (what the reflector is shown), and `detail` holds the verdict and both lists. Else an explicit
    fail with no score, whose feedback says why (never a made-up default score)."""
    decoder, problem = json.JSONDecoder(), "no JSON object in the reply"
    for start in (i for i, ch in enumerate(text or "") if ch == "{"):
        try:
            data, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        score, verdict = data.get("score"), data.get("verdict")
        if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
            problem = f"score must be a number from 0 to 1, got {score!r}"
            continue
        if verdict not in ("pass", "fail"):
            problem = f"verdict must be 'pass' or 'fail', got {verdict!r}"
            continue
        issues, missing = data.get("specific_issues", []), data.get("missing_elements", [])
        issues = tuple(map(str, issues if isinstance(issues, list) else [issues]))
        missing = tuple(map(str, missing if isinstance(missing, list) else [missing]))
        return Evaluation(
            float(score),
            "; ".join(issues + missing),
            detail={"verdict": verdict, "specific_issues": issues, "missing_elements": missing},
            raw=text,
        )
    return Evaluation(
        None, f"unusable evaluator reply: {problem}", detail={"verdict": "fail"}, raw=text or ""
    )


def passes(judged: Evaluation) -> bool:
    """Did the evaluator say pass?"""
    return judged.detail.get("verdict") == "pass"


def attempt_prompt(task: Task, mode: str, reflections: list[str], last_code: str | None) -> str:
    """The generator's user message for one attempt under a memory mode."""
    if mode not in MEMORY_MODES:
        raise ValueError(f"memory_mode must be one of {MEMORY_MODES}, got {mode!r}")
    return attempt_request(
        task,
        last_code if mode in _READS_LAST else None,
        reflections if mode in _READS_REFLECTIONS else [],
    )


@dataclass
class Reflexion:
    """Lesson 05's agent as a Strategy: `run(task, chat) -> Run` (see the module docstring)."""

    memory_mode: str = "reflections"
    window: int = 3  # reflections carried in a prompt
    max_attempts: int = 4
    token_budget: int | None = 8000
    store: MemoryStore | None = None  # persistent memory across sessions, keyed by the task's text
    session: str = "session-1"
    model_name: str = ""
    seed: int = SEED
    patience: int = 3  # attempts without a better score before the loop stops as degenerate
    judge_hidden: bool = True
    # a JSON verdict needs about 50-100 tokens; one cut off mid-JSON is unusable (lesson 05, section 3)
    evaluator_max_tokens: int = 400
    reflector_max_tokens: int = 300  # two to four sentences
    name: str = "reflexion"
    # where the asserts come from; default: write_tests
    tests_for: Callable[[Callable, Task], list[str]] | None = None
    ROLES = ("sampler", "evaluator", "reflector", "test_writer")

    def prompts(self) -> tuple[str, ...]:
        """The generator's, evaluator's, reflector's and test writer's prompts."""
        return GENERATOR_PROMPT, EVALUATOR_SYSTEM, REFLECTOR_SYSTEM, WRITE_TESTS_SYSTEM

    def run(self, task: Task, chat: Callable) -> Run:
        """Attempt, test, evaluate, reflect, remember; stop on pass, budget, regression or no progress."""

        def body() -> Run:
            key = task_key(task.prompt())
            remembered = (
                [e.reflection for e in self.store.recall(key, self.window)] if self.store else []
            )
            steps: list[Step] = []
            try:
                if self.tests_for is None:
                    asserts = evidence_step(chat, task, "self-tests", self.seed, steps)
                else:
                    asserts = self.tests_for(chat, task)
            except ModelError as err:
                return self._record(task, steps, Stop.PROVIDER_ERROR, error=str(err))
            return self._attempts(task, chat, asserts, remembered, key, steps)

        return execute(self, task, body)

    def _attempts(
        self,
        task: Task,
        chat: Callable,
        asserts: list[str],
        reflections: list[str],
        key: str,
        steps: list[Step],
    ) -> Run:
        last_code, used = None, sum(s.prompt_tokens + s.completion_tokens for s in steps)
        chosen: Draft | None = None  # the attempt returned: the accepted one, or the best so far
        stop, error = Stop.MAX_ITERATIONS, None
        for attempt in range(1, self.max_attempts + 1):
            try:
                code, evidence, judgement, used = self._one(
                    task, chat, asserts, reflections, last_code, attempt, steps, used
                )
            except ModelError as err:
                stop, error = Stop.PROVIDER_ERROR, str(err)
                break
            # each attempt: its code, score (an unusable one as 0), cost, acceptance by tests and evaluator
            history = drafts_of(steps, accept_by="judge", unscored=0.0)
            _mark_repeat(steps, [a.code for a in history[:-1]], code)
            reason = self.stop_reason(history)
            chosen = history[-1] if reason is Stop.ACCEPTED else best_so_far(history)
            score = history[-1].score
            if reason is Stop.ACCEPTED:
                self._remember(key, attempt, "", score, True, code)
            if reason:
                stop = reason
                break
            if over_budget(used, max(a.tokens for a in history), self.token_budget):
                stop = Stop.TOKEN_BUDGET  # the costliest attempt so far would not fit
                break
            last_code = code
            if self.memory_mode not in _READS_REFLECTIONS:
                continue  # no reflection is read in this mode: asking for one would only cost tokens
            try:
                reflection, spent = self._reflect(task, chat, code, evidence, judgement, steps)
            except ModelError as err:
                stop, error = Stop.PROVIDER_ERROR, str(err)
                break
            used += spent
            reflections = [*reflections, reflection][-self.window :] if self.window > 0 else []
            self._remember(key, attempt, reflection, score, evidence.all_passed, code)
        if chosen is None:
            return self._record(task, steps, stop, error=error)
        why = {
            Stop.ACCEPTED: "accepted by its tests and the evaluator",
            Stop.REGRESSED: "the best, after a drop of over 20%",
            Stop.CONVERGED: f"the best; no better score in {self.patience} attempts",
            Stop.TOKEN_BUDGET: f"the best; another attempt would pass the {self.token_budget}-token budget",
        }.get(stop, "the best so far")
        said = f"attempt {chosen.iteration}, score {chosen.score:g}: {why}"
        return self._record(task, steps, stop, chosen.code, said, error)

    def _record(self, task, steps, stop, code="", chosen="no draft", error=None) -> Run:
        """The run as it ended: the code returned (none: "no draft"), why, and every step."""
        made = {"strategy": self.name, "task_id": task.id, "steps": tuple(steps)}
        return Run(**made, final_code=code, stop=stop, chosen=chosen, error=error)

    def stop_reason(self, history: list[Draft]) -> Stop | None:
        """Why the loop stops after its last attempt, or None to go on, in lesson 05's order: accepted when the
        evaluator passes an attempt its own tests pass; regressed when its score falls below four fifths of the
        best so far; converged when `patience` attempts bring no better score; `max_attempts`. No oscillation
        rule: a repeated attempt is noted (`_mark_repeat`), and the next prompt differs. The token budget is
        checked after it, before the next attempt."""
        last, scores = history[-1], [a.score for a in history]
        if last.accepted:
            return Stop.ACCEPTED
        if last.score < max(scores) * 0.8:
            return Stop.REGRESSED
        recent = scores[-self.patience :] if self.patience else []
        if recent and len(scores) > self.patience and max(recent) <= max(scores[: -self.patience]):
            return Stop.CONVERGED
        if len(history) >= self.max_attempts:
            return Stop.MAX_ITERATIONS
        return None

    def _remember(
        self, key: str, attempt: int, reflection: str, score: float, passed: bool, code: str
    ) -> None:
        """Store one attempt in episodic memory: its reflection (empty for an accepted attempt), its
        score, and whether the agent's own tests passed it."""
        if self.store is not None:
            self.store.add(
                Episode(
                    key, self.session, attempt, reflection, score, passed, code, self.model_name
                )
            )

    def _one(self, task, chat, asserts, reflections, last_code, attempt, steps, used):
        first, prompt = len(steps), attempt_prompt(task, self.memory_mode, reflections, last_code)
        messages = generator_messages(prompt)
        reply = chat(
            messages,
            role="generator",
            temperature=SAMPLING["sampler"]["temperature"],
            seed=self.seed + attempt,
        )
        code = extract_code(reply.text, task.entry_point).code
        steps.append(model_step(len(steps), "generator", messages, reply, code=code))
        evidence, step = run_tests_step(len(steps), task, code, asserts)
        steps.append(step)
        judgement = self._ask_evaluator(EVALUATOR_SYSTEM, task, chat, code, evidence, steps)
        used += sum(s.prompt_tokens + s.completion_tokens for s in steps[first:])
        return code, evidence, judgement, used

    def _ask_evaluator(self, system, task, chat, code, evidence, steps) -> Evaluation:
        ask = evaluator_messages(system, task, code, evidence.trace())
        ev_reply = chat(
            ask,
            role="evaluator",
            temperature=SAMPLING["evaluator"]["temperature"],
            max_tokens=self.evaluator_max_tokens,
        )
        judgement = parse_judgement(ev_reply.text)
        steps.append(
            model_step(
                len(steps), "evaluator", ask, ev_reply, verdict=_evaluator_verdict(judgement)
            )
        )
        return judgement

    def _reflect(self, task, chat, code, evidence, judgement, steps):
        issues = judgement.feedback or "none named"
        ask = reflection_messages(task, code, evidence.trace(), issues)
        reply = chat(
            ask,
            role="reflector",
            temperature=SAMPLING["reflector"]["temperature"],
            seed=self.seed,
            max_tokens=self.reflector_max_tokens,
        )
        steps.append(model_step(len(steps), "reflector", ask, reply))
        return reply.text.strip(), reply.prompt_tokens + reply.completion_tokens


def _evaluator_verdict(judgement: Evaluation) -> Verdict:
    """An evaluator's judgement as a step's verdict, printed "pass, score 0.8" (or the reason it is
    unusable). An unusable judgement is a fail: the loop reads it as one, so it is counted as one."""
    reason = judgement.feedback if judgement.score is None else ""
    label = reason or f"{judgement.detail['verdict']}, score {judgement.score:g}"
    return Verdict(label, passes(judgement), judgement.score, reason=reason)


def _mark_repeat(steps: list[Step], earlier: list[str], code: str) -> None:
    """Note on the attempt's generator step when its code repeats an earlier attempt's, byte for byte:
    its tests and evaluation then say nothing new (the loop goes on, since the next prompt differs)."""
    if code in earlier:
        i = max(n for n, s in enumerate(steps) if s.role == "generator")
        steps[i] = replace(steps[i], note=f"same code as attempt {earlier.index(code) + 1}")


def memory_experiment(max_attempts: int = 3) -> list:
    """Lesson 05's experiment: one-shot (the baseline) and Reflexion under each memory mode."""
    from .one_shot import OneShot

    modes = (
        Reflexion(memory_mode=m, max_attempts=max_attempts, name=f"reflexion:{m}")
        for m in MEMORY_MODES
    )
    return [OneShot(), *modes]
