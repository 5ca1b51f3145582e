"""Lesson 03b's checks that grade a design rather than a value: several right answers written differently pass, and
each wrong answer fails with the message that names its mistake."""

from __future__ import annotations

import ast
import dataclasses
import io
import math
import tokenize

import pytest

from course_checks import lesson03b as ex
from reflect.judging import Evaluation, split_tests


def _visible(task, code):
    return task.run(code, tests=split_tests(task.tests)[0])


class ByShare:
    def evaluate(self, task, code):
        r = _visible(task, code)
        return Evaluation(
            1 + 9 * r.n_passed / len(r.tests) if r.tests else 1, r.feedback(label="visible")
        )


class PerFailure:
    def evaluate(self, task, code):
        r = _visible(task, code)
        if r.passed:
            return Evaluation(10, "all visible tests pass")
        failed = [t.describe() for t in r.failures] or [r.error or "did not load"]
        return Evaluation(max(1, 9 - 2 * len(r.failures)) if r.tests else 1, "\n".join(failed))


class AllOrNothing:
    def evaluate(self, task, code):
        r = _visible(task, code)
        return Evaluation(
            10.0 if r.passed else 1.0, "; ".join(t.call for t in r.failures) or str(r.error)
        )


class Leaks:
    """Scores the visible half but quotes every failing test, held-out ones too."""

    def evaluate(self, task, code):
        r = _visible(task, code)
        return Evaluation(
            1 + 9 * r.n_passed / len(r.tests) if r.tests else 1, task.run(code).feedback()
        )


class MoreIsBetter:
    def evaluate(self, task, code):
        r = _visible(task, code)
        return Evaluation(10 if r.passed else 1 + len(r.failures), r.feedback(label="visible"))


class NoFloor:
    """A fresh read's answer: 10 less one per failure, so a draft failing 10 or more scores 0 or below."""

    def evaluate(self, task, code):
        r = _visible(task, code)
        return Evaluation(10 - len(r.failures) if r.tests else 1, r.feedback(label="visible"))


class Vague:
    def evaluate(self, task, code):
        r = _visible(task, code)
        return Evaluation(10 if r.passed else 1, "" if r.passed else "some visible tests failed")


class Silent:
    def evaluate(self, task, code):
        r = _visible(task, code)
        return Evaluation(
            10 if r.passed else 1, "" if r.passed else f"{len(r.failures)} visible tests failed"
        )


@pytest.mark.parametrize("critic", [ByShare, PerFailure, AllOrNothing])
def test_visible_tests_passes_any_scoring_with_the_properties(critic):
    ok, message = ex.visible_tests.check(critic)
    assert ok, message


@pytest.mark.parametrize(
    ("critic", "words"),
    [
        (Leaks, "held-out test"),
        (Silent, "quotes no failing test"),
        (MoreIsBetter, "never score higher"),
        (Vague, "say which tests failed"),
        (NoFloor, "failing 19 of 20 visible tests of sign scored -9"),
    ],
)
def test_visible_tests_names_the_mistake(critic, words):
    ok, message = ex.visible_tests.check(critic)
    assert not ok and words in message, message


def by_ast(code):
    """The lesson's solution: ast drops the comments; docstrings removed, an emptied body given pass."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and body
        ):
            if (
                isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                node.body = body[1:] or ([] if isinstance(node, ast.Module) else [ast.Pass()])
    return ast.unparse(tree)


def by_tokens(code):
    """A right critic_view written with tokenize and ast, not ast.unparse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    lines = code.splitlines(keepends=True)
    cut = []  # (first line, last line, needs pass) of each docstring
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and body
        ):
            first = body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                cut.append(
                    (
                        first.lineno,
                        first.end_lineno,
                        len(body) == 1 and not isinstance(node, ast.Module),
                    )
                )
    for start, end, needs_pass in sorted(cut, reverse=True):
        indent = lines[start - 1][: len(lines[start - 1]) - len(lines[start - 1].lstrip())]
        lines[start - 1 : end] = [f"{indent}pass\n"] if needs_pass else []
    text = "".join(lines)
    tokens = [
        t
        for t in tokenize.generate_tokens(io.StringIO(text).readline)
        if t.type != tokenize.COMMENT
    ]
    return tokenize.untokenize(tokens)


@pytest.mark.parametrize("view", [by_ast, by_tokens])
def test_critic_view_passes_ast_and_tokenize_answers(view):
    ok, message = ex.critic_views.check(view)
    assert ok, message


def _unparsed(code):
    try:
        return ast.unparse(ast.parse(code))
    except SyntaxError:
        return code


def _line_start_strings_as_docstrings(code):
    """A fresh read's answer: any string token that starts a line taken for a docstring (a list's item too)."""
    try:
        ast.parse(code)
        toks = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (SyntaxError, tokenize.TokenError):
        return code
    out, prev = [], tokenize.NEWLINE
    starts = (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT)
    for t in toks:
        if t.type == tokenize.COMMENT:
            continue
        if t.type == tokenize.STRING and prev in starts:
            prev = t.type
            out.append((tokenize.NAME, "pass"))
            continue
        prev = t.type
        out.append((t.type, t.string))
    return tokenize.untokenize(out)


@pytest.mark.parametrize(
    ("view", "words"),
    [
        (
            lambda code: "\n".join(
                line for line in code.splitlines() if not line.strip().startswith("#")
            ),
            "left the comment",
        ),
        (_unparsed, "left the docstring"),
        (lambda code: by_ast(code).replace("'#'", "''"), "changed what the code does"),
        (lambda code: by_ast(code) if by_ast(code) != code else "", "as it is"),
        (lambda code: by_ast(code).replace("    pass", ""), "no longer parses"),
        (_line_start_strings_as_docstrings, "no longer parses"),
    ],
)
def test_critic_view_names_the_mistake(view, words):
    ok, message = ex.critic_views.check(view)
    assert not ok and words in message, message


def test_mcnemar_by_hand_passes_and_one_tail_is_named():
    def right(b, c):
        n = b + c
        return min(1.0, 2 * sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n) if n else 1.0

    def one_tail(b, c):
        n = b + c
        return sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n if n else 1.0

    assert ex.MCNEMAR.problem(right) is None
    assert "one tail" in ex.MCNEMAR.problem(one_tail)


class _TestsThenLLM:
    def __init__(self, llm_critic, tests_critic=None):
        self.llm, self.tests = llm_critic, tests_critic or ex.TestGroundedCritic()

    def evaluate(self, task, code):
        t = self.tests.evaluate(task, code)
        return t if t.score < 10 else self.answer(t, self.llm.evaluate(task, code))

    def answer(self, tests, llm):
        return llm


class _CopiesTheLLMs(_TestsThenLLM):
    def answer(self, tests, llm):
        return dataclasses.replace(llm)


class _MergesTheFeedback(_TestsThenLLM):
    """A fresh read's answer: a new Evaluation with the LLM's score and both feedbacks, its cost lost."""

    def answer(self, tests, llm):
        return Evaluation(llm.score, tests.feedback + "\n" + llm.feedback)


class _KeepsTheFeedbackOnly(_TestsThenLLM):
    def answer(self, tests, llm):
        return Evaluation(llm.score, llm.feedback)


@pytest.mark.parametrize("combo", [_TestsThenLLM, _CopiesTheLLMs])
def test_tests_then_llm_passes_the_llms_evaluation_returned_as_it_is(combo):
    ok, message = ex.tests_then_llm.check(combo)
    assert ok, message


@pytest.mark.parametrize(
    ("combo", "words"),
    [
        (_MergesTheFeedback, "return that Evaluation itself"),
        (_KeepsTheFeedbackOnly, "return that Evaluation itself"),
    ],
)
def test_tests_then_llm_names_an_evaluation_made_anew(combo, words):
    ok, message = ex.tests_then_llm.check(combo)
    assert not ok and words in message, message


def test_the_seeded_histories_reach_the_cut_s_stop_paths():
    """03b.4's 20 seeded histories: with the 7 written ones, the cut meets every stop the rules make on them."""
    reasons = {str(want[1]) for want in ex.CUT.wants()}
    assert len(ex.MADE_UP_HISTORIES) == 27 and len({len(h) for h in ex.MADE_UP_HISTORIES}) == 4
    assert reasons >= {
        "accepted",
        "oscillating",
        "regressed",
        "invalid_critic",
        "max_iterations",
        "None",
    }


def test_a_fourth_fresh_reads_wrong_answers_of_lesson_03b_fail():
    """A critic view that strips triple-quoted docstrings only: a single-quoted one talks to the reviewer too."""
    import ast

    def triple_only(code):
        try:
            tree, lines = ast.parse(code), code.splitlines(keepends=True)
        except SyntaxError:
            return code
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
                first = body[0]
                text = "".join(lines[first.lineno - 1 : first.end_lineno]).strip()
                if isinstance(first.value, ast.Constant) and text[:3] in ('"""', "'''"):
                    node.body = body[1:] or (
                        [ast.Pass()] if not isinstance(node, ast.Module) else []
                    )
        return ast.unparse(tree)

    assert "a docstring in single quotes" in ex.VIEW.problem(triple_only)


def test_a_tests_then_llm_remembering_the_llms_verdict_by_task_fails():
    """03b.2 (a fifth fresh read's): one instance asked about a second passing draft of the same task asks the LLM
    critic again; one that keeps the first verdict by task id fails."""
    from reflect.judging.critics import TestGroundedCritic

    class Memo:
        def __init__(self, llm_critic, tests_critic=None):
            self.llm, self.tests, self.kept = llm_critic, tests_critic or TestGroundedCritic(), {}

        def evaluate(self, task, code):
            ev = self.tests.evaluate(task, code)
            if ev.score < 10:
                return ev
            if task.id not in self.kept:
                self.kept[task.id] = self.llm.evaluate(task, code)
            return self.kept[task.id]

    ok, message = ex.tests_then_llm.check(Memo)
    assert not ok and "two drafts passing every visible test" in message, message


def test_a_default_margin_or_budget_changed_fails():
    """03b.5 and 03b.6 (a sixth fresh read's): says_little's margin and threshold_table's max_iterations are also
    left to their defaults, 0.2 and 3, which a changed default misses."""
    import dataclasses

    from reflect.judging.calibration import sweep, uninformative_band

    band, table = (dataclasses.replace(s, forbid=None) for s in (ex.BAND, ex.THRESHOLDS))
    assert band.problem(lambda pairs, margin=0.2: uninformative_band(pairs, margin=margin)) is None
    for m in (0.1, 0.25):
        problem = band.problem(lambda pairs, margin=m: uninformative_band(pairs, margin=margin))
        assert problem and "no margin given" in problem, (m, problem)
    problem = table.problem(
        lambda hs, ts, max_iterations=2: sweep(hs, ts, max_iterations=max_iterations)
    )
    assert problem and "no max_iterations given" in problem, problem


def test_a_threshold_table_on_the_packages_replay_rule_passes_and_on_its_sweep_fails():
    """03b.6 (a seventh fresh read's right answer): the table is the exercise, so the package's replay_rule (Build
    4's answer key) may cut each loop; calling its sweep, the table itself, is refused."""
    from reflect.judging.calibration import replay_rule, sweep
    from reflect.judging.controller import StopRule

    def threshold_table(histories, thresholds, max_iterations=3):
        rows = []
        for t in thresholds:
            rule = StopRule(threshold=t, max_iterations=max_iterations)
            cuts = [replay_rule(h, rule) for h in histories]
            n = len(cuts) or 1
            rows.append(
                {
                    "threshold": t,
                    "avg_iterations": sum(len(kept) for kept, _ in cuts) / n,
                    "pass_rate": sum(bool(rule.choose(kept, why).passed) for kept, why in cuts) / n,
                    "avg_tokens": sum(d.tokens for kept, _ in cuts for d in kept) / n,
                }
            )
        return rows

    assert ex.THRESHOLDS.problem(threshold_table) is None
    problem = ex.THRESHOLDS.problem(lambda hs, ts, max_iterations=3: sweep(hs, ts, max_iterations))
    assert problem and "called the package's sweep" in problem, problem


def test_a_default_tests_critic_that_is_no_test_grounded_critic_fails():
    """03b.2 (a seventh fresh read's): with no tests critic given, the default is a TestGroundedCritic(); a tests
    critic of the learner's own that scores as it does on the check's drafts (their Build 1 class) fails too."""
    from reflect.judging.critics import LLMCritic, TestGroundedCritic

    grounded = TestGroundedCritic.evaluate  # as it is before the check counts its calls

    class Lookalike:
        def evaluate(self, task, code):
            return grounded(TestGroundedCritic(), task, code)

    class Mine(ex._TestsThenLLM):
        def __init__(self, llm_critic: LLMCritic, tests_critic: object = None) -> None:
            super().__init__(llm_critic, tests_critic or Lookalike())

    assert ex.tests_then_llm.check(ex._TestsThenLLM)[0]
    ok, message = ex.tests_then_llm.check(Mine)
    assert not ok and "no TestGroundedCritic" in message, message


def test_the_eighth_fresh_reads_wrong_answers_of_lesson_03b_fail():
    """03b.1: a critic that keeps its verdicts by the draft's text (the same text on another task gets the first
    task's verdict); 03b.7: a class left with no body once its docstring is cut, and async functions skipped."""
    from reflect.judging.critics import Evaluation, split_tests

    kept = {}

    class ByText:
        def evaluate(self, task, code):
            if code not in kept:
                res = task.run(code, tests=split_tests(task.tests)[0])
                n = len(res.tests)
                score = 10 if res.passed else round(1 + 9 * res.n_passed / n, 1) if n else 1
                kept[code] = Evaluation(score, res.feedback(label="visible"))
            return kept[code]

    ok, message = ex.visible_tests.check(ByText)[:2]
    assert not ok and "clip and count_vowels" in message, message

    def emptied(code, kinds=(ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        try:
            tree = ast.parse(code)
        except SyntaxError:
            return code
        for node in ast.walk(tree):
            if isinstance(node, kinds) and ast.get_docstring(node, clean=False) is not None:
                node.body = node.body[1:]
                if not node.body and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    node.body = [ast.Pass()]
        return ast.unparse(tree) + "\n"

    ok, message = ex.critic_views.check(emptied)[:2]
    assert not ok and "a class whose body is only its docstring" in message, message
    ok, message = ex.critic_views.check(
        lambda c: emptied(c, (ast.Module, ast.FunctionDef)) if "class " not in c else by_ast(c)
    )[:2]
    assert not ok and "an async function" in message, message
