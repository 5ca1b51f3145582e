"""Lessons 04 and 05's checks on their own, without the notebooks: right answers written another way pass
(lists for tuples, a snapshot's `tasks` for its `next`, a while loop for a for loop, a store ordered by rowid)
and the wrong answers the workshop issue named fail (a gate that accepts at 8, a step index always 0, a token
budget over every run of a thread, a filter that keeps vague reflections, a key made of the first line or of
the set of words)."""

from __future__ import annotations

import json
import sys
import tempfile
import types
from pathlib import Path

from course_checks import lesson04, lesson05

ROOT = Path(__file__).resolve().parents[1]
IMPORTS = {
    "04": "import operator, re, sqlite3\nfrom typing import Annotated, TypedDict\n"
    "from langgraph.checkpoint.sqlite import SqliteSaver\nfrom langgraph.graph import END, START, StateGraph\n"
    "from langgraph.types import Command, interrupt\nfrom reflect.judging import TestGroundedCritic\n"
    "from reflect.model.roles import sampling\nfrom reflect.strategies import graph as rg\n"
    "from reflect.strategies import refine\n"
    "from reflect.tasks.extract import extract_code\n"
    "from reflect.tasks.prompts import GENERATOR_PROMPT, REFINER_SYSTEM, refine_request\n"
    "from reflect.tasks.task import get_task\n",
    "05": "import json, re, sqlite3\nfrom reflect.judging.self_tests import run_self_tests\n"
    "from reflect.memory.store import task_key\nfrom reflect.model.roles import sampling\n"
    "from reflect.strategies import reflexion as rx\nfrom reflect.tasks.extract import extract_code\n"
    "from reflect.tasks.prompts import EVALUATOR_SYSTEM, attempt_request, evaluator_messages, "
    "generator_messages, reflection_messages\nfrom reflect.tasks.task import get_task\n",
}


def solved(lesson: str, *keys: str, swap: tuple[str, str] | list | None = None) -> dict:
    """The solved cells of the given exercises run in one namespace; `swap` replaces a text in them first (or
    each of a list of swaps)."""
    path = next((ROOT / "solutions").glob(f"{lesson}_*.ipynb"))
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    module = types.ModuleType(
        f"solved_{lesson}_{len(sys.modules)}"
    )  # LangGraph reads a state's hints from its
    sys.modules[module.__name__] = module  # module's globals
    namespace = module.__dict__
    exec(IMPORTS[lesson], namespace)  # noqa: S102 - the course's own cells
    for key in keys:
        source = "".join(
            next(c for c in cells if c["metadata"].get("reflect", {}).get("key") == key)["source"]
        )
        for old, new in [swap] if swap and isinstance(swap[0], str) else swap or []:
            source = source.replace(old, new)
        exec(source, namespace)  # noqa: S102
    return namespace


def passes(check, *args) -> bool:
    return check.evaluate(*args)[0]


def test_a_history_read_through_each_snapshots_tasks_passes():
    def visited(graph, config):
        snapshots = list(reversed(list(graph.get_state_history(config))))
        return tuple(t.name for snap in snapshots for t in snap.tasks if t.name != "__start__")

    assert passes(lesson04.read_history, visited)


def test_the_gate_accepting_at_8_and_a_step_index_always_0_fail():
    gate = 'status = "accepted" if ev.score == 10 else "needs_revision"'
    assert passes(lesson04.sandbox_gate, solved("04", "04.5")["tests_gate"])
    at_8 = solved(
        "04", "04.5", swap=(gate, 'status = "accepted" if ev.score >= 8 else "needs_revision"')
    )
    assert not passes(lesson04.sandbox_gate, at_8["tests_gate"])
    index = 'rg.critic_step(len(rg.this_run(state, "steps")),'
    at_0 = solved("04", "04.5", swap=(index, "rg.critic_step(0,"))
    assert not passes(lesson04.sandbox_gate, at_0["tests_gate"])


def test_a_token_budget_over_every_run_of_the_thread_fails():
    assert passes(lesson04.token_budget, solved("04", "04.4")["route_with_budget"])
    every = solved("04", "04.4", swap=('rg.this_run(state, "steps")', 'state["steps"]'))
    assert not passes(lesson04.token_budget, every["route_with_budget"])


def test_the_window_measured_as_lists_passes():
    from reflect.strategies.reflexion import Reflexion

    def measure_windows(windows):
        out = {}
        for k in windows:
            run = Reflexion(window=k, max_attempts=4, patience=9, tests_for=lesson05.fact_tests)
            r = run.run(lesson05.get_task("factorial"), lesson05.window_chat())
            out[k] = [r.stop.value == "accepted", len(r.drafts)]
        return out

    assert passes(
        lesson05.memory_window,
        measure_windows,
        lesson05.window_chat,
        lesson05.get_task("factorial"),
        lesson05.fact_tests,
    )


def test_a_while_loop_and_a_store_ordered_by_rowid_pass():
    loop = solved("05", "05.1")
    exec(  # noqa: S102 - a right loop in another shape
        "def my_reflexion(chat, task, asserts, max_attempts=3, window=3, memory=(), seed=42, learn=None,\n"
        "                 accept=lambda e, j: j.detail['verdict'] == 'pass' and e.all_passed):\n"
        "    learn = learn or reflect\n"
        "    reflections = list(memory)[-window:] if window > 0 else []\n"
        "    drafts, written, n = [], [], 0\n"
        "    while True:\n"
        "        n += 1\n"
        "        code, evidence, judged = attempt(chat, task, asserts, reflections, seed + n)\n"
        "        drafts.append((judged.score if judged.score is not None else 0.0, -n, code))\n"
        "        if accept(evidence, judged):\n"
        "            return code, 'accepted', written\n"
        "        best = max(drafts)\n"
        "        if drafts[-1][0] < 0.8 * best[0]:\n"
        "            return best[2], 'regressed', written\n"
        "        if n >= max_attempts:\n"
        "            return best[2], 'max_iterations', written\n"
        "        written.append(learn(chat, task, code, evidence, judged))\n"
        "        reflections = (reflections + written[-1:])[-window:] if window > 0 else []\n",
        loop,
    )
    assert passes(lesson05.reflexion_loop, loop["my_reflexion"])
    ns = solved("05")
    exec(  # noqa: S102
        "def remember(db_path, key, session, reflections):\n"
        "    db = sqlite3.connect(db_path)\n"
        "    db.execute('CREATE TABLE IF NOT EXISTS m (k TEXT, s TEXT, r TEXT)')\n"
        "    db.executemany('INSERT INTO m VALUES (?, ?, ?)', [(key, session, r) for r in reflections])\n"
        "    db.commit()\n"
        "    db.close()\n"
        "def recall(db_path, key, window):\n"
        "    db = sqlite3.connect(db_path)\n"
        "    db.execute('CREATE TABLE IF NOT EXISTS m (k TEXT, s TEXT, r TEXT)')\n"
        "    rows = [r for (r,) in db.execute('SELECT r FROM m WHERE k = ? ORDER BY rowid', (key,))]\n"
        "    db.close()\n"
        "    return tuple(rows[-window:]) if window > 0 else ()\n",
        ns,
    )
    assert passes(lesson05.memory_round_trip, ns["remember"], ns["recall"])


def test_vague_reflections_and_loose_keys_fail():
    naive = (
        "def is_specific(reflection):\n    text = reflection.strip()\n"
        "    if '```' in text or re.search(r'\\bdef \\w+\\(', text) or len(text.split()) < 8:\n        return False\n"
        '    return bool(re.search(r"\\w+\\(.*?\\)|\\d|\'[^\']+\'|\\"[^\\"]+\\"|\\[\\]", text))\n'
    )
    ns = solved("05")
    exec(naive, ns)  # noqa: S102 - keeps 'Step 1: think harder' and "Don't ... don't"
    assert not passes(lesson05.specific, ns["is_specific"], [])
    right = solved("05", "05.7")
    assert passes(lesson05.specific, right["is_specific"], [])
    for key in (
        "def family_key(text):\n    return task_key(text.strip().splitlines()[0].lower())\n",
        "def family_key(text):\n    return task_key(' '.join(sorted(set(re.findall(r'[a-z0-9_]+', text.lower())))))\n",
    ):
        loose = solved("05")
        exec(key, loose)  # noqa: S102
        assert lesson05.shared_key.evaluate(loose["family_key"], None)[0] is False


def test_a_memory_that_recalls_from_this_process_fails_the_round_trip():
    """Build 5's memory must come back from the file: a recall served from a dict kept in the process (the file
    written too) fails, and so does one that writes nothing another process can read."""
    import sqlite3

    from course_checks import lesson05

    kept: dict = {}

    def remember(db_path, key, session, reflections):
        kept.setdefault(key, []).extend(reflections)
        with sqlite3.connect(db_path) as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS m (id INTEGER PRIMARY KEY, key TEXT, reflection TEXT)"
            )
            db.executemany(
                "INSERT INTO m (key, reflection) VALUES (?, ?)", [(key, r) for r in reflections]
            )

    def recall(db_path, key, window):
        return kept.get(key, [])[-window:] if window else []

    passed, message, _ = lesson05.memory_round_trip.evaluate(remember, recall)
    assert not passed and "not what this session remembers" in message, message

    def remember_nothing(db_path, key, session, reflections):
        kept.setdefault(key, []).extend(reflections)

    kept.clear()
    passed, message, _ = lesson05.memory_round_trip.evaluate(remember_nothing, recall)
    assert not passed and "another process" in message, message


def test_the_fresh_reads_wrong_answers_of_lesson_05_fail():
    """Wrong answers a fresh learner read passed, each now a case: a regression measured against the first score
    (the best is not the first), a loop that trims the caller's memory in place, a recall whose start is counted
    back from the end (a window above the stored count), results typed in rather than run on the scripted model,
    an empty call counted as concrete, and a key made with the built-in hash(), salted per process."""
    for swap in (
        # regression measured against the first attempt's score, not the best so far
        ("if score < 0.8 * best[1]:", "if score < 0.8 * drafts[0][1]:"),
        # the caller's memory trimmed in place
        (
            "reflections, drafts, written = list(memory)[-window:] if window else [], [], []",
            "reflections, drafts, written = memory if isinstance(memory, list) else list(memory), [], []\n"
            "    del reflections[: max(0, len(reflections) - window)]",
        ),
    ):
        wrong = solved("05", "05.1", "05.2", swap=swap)
        assert not passes(lesson05.reflexion_loop, wrong["my_reflexion"]), swap
    ns = solved("05")
    exec(  # noqa: S102
        "def remember(db_path, key, session, reflections):\n"
        "    with sqlite3.connect(db_path) as db:\n"
        "        db.execute('CREATE TABLE IF NOT EXISTS m (k TEXT, r TEXT)')\n"
        "        db.executemany('INSERT INTO m VALUES (?, ?)', [(key, r) for r in reflections])\n"
        "def recall(db_path, key, window):\n"
        "    with sqlite3.connect(db_path) as db:\n"
        "        db.execute('CREATE TABLE IF NOT EXISTS m (k TEXT, r TEXT)')\n"
        "        texts = [r for (r,) in db.execute('SELECT r FROM m WHERE k = ? ORDER BY rowid', (key,))]\n"
        "    return texts[len(texts) - window:] if window > 0 else []\n",
        ns,
    )
    assert not passes(lesson05.memory_round_trip, ns["remember"], ns["recall"])
    typed_in = {"measure_windows": lambda windows: {k: (k >= 3, 4) for k in windows}}
    assert not passes(
        lesson05.memory_window,
        typed_in["measure_windows"],
        lesson05.window_chat,
        lesson05.get_task("factorial"),
        lesson05.fact_tests,
    )
    empty_call = solved("05", "05.7", swap=("\\w\\([^()]+\\)|", "\\w\\([^()]*\\)|"))
    assert not passes(lesson05.specific, empty_call["is_specific"], [])
    salted = solved(
        "05", "05.8", swap=('return task_key(" ".join(words))', 'return str(hash(" ".join(words)))')
    )
    message = lesson05.shared_key.evaluate(salted["family_key"], None)[1]
    assert "salts anew in every process" in message, message


def test_the_fresh_reads_wrong_answers_of_lesson_04_fail():
    """Wrong answers a fresh learner read passed, each now a case: a repeat compared line by line without blank
    lines (lesson 03's) rather than stripped, a gate that records another score than the tests' or returns the whole
    state (doubling the appended errors), a chat that counts critic calls rather than revisions or keeps its count on
    the model; and a state without `status` is named, not a crash of the check."""
    repeat = solved(
        "04",
        "04.1",
        "04.8",
        swap=(
            'new.strip() == state["code"].strip()',
            "[x.rstrip() for x in new.splitlines() if x.strip()] == "
            '[x.rstrip() for x in state["code"].splitlines() if x.strip()]',
        ),
    )
    assert "blank line" in lesson04.repeat_stop.evaluate(repeat["repeat_builder"])[1]
    for swap, said in (
        ("ev.feedback, ev.score, role=", "score 1"),
        ('return {"steps": [step.to_dict()]}', "errors again"),
    ):
        wrong = solved(
            "04",
            "04.5",
            swap=(swap, "ev.feedback, 1, role=")
            if said == "score 1"
            else (swap, 'return {**state, "steps": [step.to_dict()]}'),
        )
        assert said in lesson04.sandbox_gate.evaluate(wrong["tests_gate"])[1], swap
    for swap in (
        (
            'if role == "refiner":\n            sent["refiner"] += 1\n            if',
            'if role == "critic":\n            sent["refiner"] += 1\n        if role == "refiner":\n            if',
        ),
        (
            '    sent = {"refiner": 0}\n',
            '    sent = small.__dict__.setdefault("sent", {"refiner": 0})\n',
        ),
    ):
        wrong = solved("04", "04.6", swap=swap)
        assert not passes(lesson04.escalation, wrong["escalating"]), swap
    stateless = solved("04", "04.1", swap=("    status: str\n", ""))
    message = lesson04.your_loop.evaluate(stateless["loop_builder"])[1]
    assert "no status" in message or "status" in message and "AttributeError" not in message, (
        message
    )


def test_the_second_fresh_reads_wrong_answers_of_lesson_05_fail():
    """Wrong answers a second fresh read passed, each now caught: accepted read as "did not reach max_iterations"
    (a model whose scores fall makes runs that regress), a recall ordered by session name (session-10 sorts
    before session-9), and an entry that cuts each failed assert at 60 characters."""
    window = solved(
        "05", "05.6", swap=('r.stop.value == "accepted"', 'r.stop.value != "max_iterations"')
    )
    window["fact"], window["fact_tests"] = lesson05.get_task("factorial"), lesson05.fact_tests
    window["window_chat"] = lesson05.window_chat
    message = lesson05.memory_window.evaluate(
        window["measure_windows"], lesson05.window_chat, window["fact"], lesson05.fact_tests
    )[1]
    assert "scores fall" in message, message
    by_name = solved("05", "05.5", swap=("ORDER BY id DESC", "ORDER BY session DESC, id DESC"))
    assert not passes(lesson05.memory_round_trip, by_name["remember"], by_name["recall"])
    cut = solved("05", "05.9", swap=('f"{a} (got {out})"', 'f"{a[:60]} (got {out})"'))
    assert not passes(lesson05.memory_entry, cut["keep"])


def test_the_second_fresh_reads_wrong_answers_of_lesson_04_fail():
    """From a second fresh read of lesson 04, each now caught: a recursion limit typed in for budgets 1 to 4; a
    gate that lets the hidden tests decide, or numbers its step by the drafts; a repeat graph that keeps the fenced
    reply as its draft; a history read through only its last 8 snapshots; an escalation that always asks strong
    (told so, not that a count is shared); and no builder returned (named by the drive, spec.Wrong)."""
    typed = {1: 3, 2: 5, 3: 7}
    assert passes(lesson04.recursion_limit, lambda n: 2 * n + 1)
    assert not passes(lesson04.recursion_limit, lambda n: typed.get(n, 9))
    assert passes(
        lesson04.recursion_limit, lambda n: 2.0 * n + 1
    )  # a sixth fresh read's: 7.0 limits as 7
    assert not passes(lesson04.recursion_limit, lambda n: 2.0 * n)

    index = 'len(rg.this_run(state, "steps"))'
    by_drafts = solved("04", "04.5", swap=(index, "rg.iteration(state)"))
    assert not passes(lesson04.sandbox_gate, by_drafts["tests_gate"])
    hidden = solved(
        "04", "04.5", swap=("ev.score == 10", "judge(task, rg.current_draft(state)).passed")
    )
    hidden["judge"] = __import__("reflect.judging.hidden", fromlist=["judge"]).judge
    assert not passes(lesson04.sandbox_gate, hidden["tests_gate"])

    fenced = solved(
        "04",
        "04.1",
        "04.8",
        swap=(
            'extract_code(chat(messages, role="generator", **sampling("generator")).text, task.entry_point).code',
            'chat(messages, role="generator", **sampling("generator")).text',
        ),
    )
    assert "critic was shown" in lesson04.repeat_stop.evaluate(fenced["repeat_builder"])[1]

    history = solved(
        "04",
        "04.7",
        swap=("graph.get_state_history(config)", "graph.get_state_history(config, limit=8)"),
    )
    assert not passes(lesson04.read_history, history["visited"])

    def escalating(small, strong, after):
        return lambda messages, role="generator", **params: (
            strong if role == "refiner" else small
        )(messages, role=role, **params)

    assert (
        "the first `after` revisions stay on small" in lesson04.escalation.evaluate(escalating)[1]
    )
    compiled = {"loop_builder": lambda *a, **k: None}  # no builder returned
    message = lesson04.your_loop.evaluate(compiled["loop_builder"])[1]
    assert "return the StateGraph builder itself" in message and "raised" not in message, message


def test_a_verdict_read_from_innermost_braces_fails():
    """A third fresh read's read_verdict: candidates found with \\{[^{}]*\\}, so a verdict holding an object (or a
    brace in a string) is never read, and an object inside one is read in its place."""
    import json
    import re

    from course_checks import lesson05

    def innermost(reply):
        for m in re.finditer(r"\{[^{}]*\}", reply):
            try:
                v = json.loads(m.group())
            except ValueError:
                continue
            score = v.get("score") if isinstance(v, dict) else None
            ok = isinstance(score, (int, float)) and not isinstance(score, bool) and 0 <= score <= 1
            if ok and v.get("verdict") in ("pass", "fail"):
                return float(score), v["verdict"]
        return None

    problem = lesson05.VERDICT.problem(innermost)
    assert problem is not None and '"detail": {"n": 1}' in problem, problem


def test_a_draft_counter_kept_in_the_builder_fails_on_a_graph_run_twice():
    """A third fresh read's loop_builder counts drafts in its closure, not in the state: right for one run of a
    compiled graph, and n = 4, 5 on the next. Build 1 runs one compiled graph twice."""
    swap = (
        'len(state["scores"]) + 1)}',
        "next(drafts))}\n\n    drafts = iter(range(2, 99))",
    )
    closure = solved("04", "04.1", swap=swap)
    ok, message, *_ = lesson04.your_loop.evaluate(closure["loop_builder"])
    assert not ok and "revision 2 handed revise" in message, message
    swaps = [
        ('len(state["scores"]) + 1)\n', "next(drafts))\n"),
        ("max_iterations=3):\n", "max_iterations=3):\n    drafts = iter(range(2, 99))\n\n"),
    ]
    repeat = solved("04", "04.1", "04.8", swap=swaps)
    ok, message, *_ = lesson04.repeat_stop.evaluate(repeat["repeat_builder"])
    assert not ok and "revise was handed" in message, message


def test_the_fourth_fresh_reads_wrong_answers_of_lesson_05_fail(tmp_path):
    """Wrong answers a fourth fresh read passed, each now caught: an attempt that keeps only the last 3 reflections
    it is given, a range test that lets NaN through, a reading that falls back to Python literals, a count of
    drafts written that skips the first, and keys that drop small words or keep 4 hex digits of a hash."""
    sliced = solved(
        "05",
        "05.1",
        swap=(
            "attempt_request(task, None, reflections)",
            "attempt_request(task, None, reflections[-3:])",
        ),
    )
    message = lesson05.one_attempt.evaluate(sliced["attempt"], sliced["reflect"])[1]
    assert "given 5 reflections" in message, message
    nan = solved("05", "05.3", swap=("0 <= score <= 1", "not (score < 0 or score > 1)"))
    assert "NaN" in lesson05.VERDICT.problem(nan["read_verdict"])
    literal = solved("05", "05.3")
    exec(  # noqa: S102 - a fresh read's fallback to a Python literal
        "import ast\n_json = read_verdict\n"
        "def read_verdict(text):\n"
        "    got = _json(text)\n"
        "    if got is None and '{' in text:\n"
        "        try:\n"
        "            d = ast.literal_eval(text[text.index('{'):text.index('}') + 1])\n"
        "            if 0 <= d['score'] <= 1 and d['verdict'] in ('pass', 'fail'):\n"
        "                return float(d['score']), d['verdict']\n"
        "        except Exception:\n"
        "            return None\n"
        "    return got\n",
        literal,
    )
    assert "'score': 0.5" in lesson05.VERDICT.problem(literal["read_verdict"])
    skips = solved(
        "05",
        "05.4",
        swap=("for d in r.drafts)", "for d in r.drafts[1:]) or hidden(r.task_id, r.final_code)"),
    )
    assert "only the first draft right" in lesson05.FOUND.problem(skips["drafts_found"])
    store = lesson05.MemoryStore(tmp_path / "memory.sqlite")
    right = solved("05", "05.8")
    assert passes(lesson05.shared_key, right["family_key"], store)
    for key in (
        "def family_key(text):\n    words = [w for w in re.findall(r'[a-z0-9_]+', text.lower()) if w not in "
        "('a', 'an', 'the', 'and', 'or', 'that')]\n    return ' '.join(words)\n",
        "def family_key(text):\n    import hashlib\n    words = re.findall(r'[a-z0-9_]+', text.lower())\n"
        "    return hashlib.md5(' '.join(words).encode()).hexdigest()[:4]\n",
    ):
        loose = solved("05")
        exec(key, loose)  # noqa: S102
        assert lesson05.shared_key.evaluate(loose["family_key"], store)[0] is False, key


def test_an_edit_that_keeps_the_draft_is_still_an_edit():
    """A fourth fresh read: a review node that approves an edit whose code is the draft under review passed; the
    statement makes every edit status "edited"."""
    kept = solved(
        "04",
        "04.1",
        "04.3",
        swap=(
            'if decision["action"] == "edit":',
            'if decision["action"] == "edit" and decision["code"].strip() != state["code"].strip():',
        ),
    )
    ok, message = lesson04.your_review.evaluate(kept["review_builder"], kept["resume_review"])[:2]
    assert not ok and "then edit, the draft kept" in message, message
    assert "status 'rejected'" in message and "expected" in message.split("status 'rejected'")[1], (
        message
    )
    right = solved("04", "04.1", "04.3")
    assert passes(lesson04.your_review, right["review_builder"], right["resume_review"])


def test_the_gated_graph_runs_say_what_the_passing_sentence_says():
    """04.5's graph cases on the right gate: the broken draft never reaches the critic, one revision is asked
    for, and the fixed draft is accepted, on both tasks."""
    runs = lesson04.GATE.wants()[-2:]
    assert runs == [{"critic saw": ["fixed"], "revisions": 1, "status": "ok"}] * 2


def test_05_1s_answer_key_sends_the_package_reflexions_requests():
    """05.1's key (attempt and reflect as the lesson writes them) makes the requests of the package's Reflexion on
    its four-attempt script, call for call: the check's 'the package's requests' holds."""
    import copy

    from reflect.testing import ScriptedChat

    (script, task_id, asserts, seeds), _ = lesson05.ATTEMPT.cases[0].copies()
    ours, package = ScriptedChat(copy.deepcopy(script)), ScriptedChat(copy.deepcopy(script))
    lesson05.ATTEMPT.key(ours, task_id, asserts, seeds)
    lesson05._package_run(package, lesson05.get_task(task_id), asserts, max_attempts=len(seeds))
    assert [(c.role, c.messages, c.params) for c in ours.calls] == [
        (c.role, c.messages, c.params) for c in package.calls
    ]
    assert len(ours.calls) == 11


def test_the_fifth_fresh_reads_wrong_answers_of_lesson_04_fail():
    """From a fifth fresh read of lesson 04 (/tmp/fresh04e), each now caught: loop_builder's defaults changed
    (threshold 7, budget 2), its state not named LoopState, a repeat graph whose router skips or trips on an
    unusable critique, a gate accepting a rounded score of 10, and an escalation whose count restarts at each
    generator call."""
    for swap in (
        (
            "threshold=8, max_iterations=3, out_of_budget=END",
            "threshold=7, max_iterations=3, out_of_budget=END",
        ),
        (
            "threshold=8, max_iterations=3, out_of_budget=END",
            "threshold=8, max_iterations=2, out_of_budget=END",
        ),
        ("LoopState", "State"),
    ):
        wrong = solved("04", "04.1", swap=swap)
        assert not passes(lesson04.your_loop, wrong["loop_builder"]), swap
    for swap in (
        ("(score is not None and score >= threshold)", "(score >= threshold)"),
        (
            'len(state["scores"]) >= max_iterations',
            'len([x for x in state["scores"] if x is not None]) >= max_iterations',
        ),
    ):
        wrong = solved("04", "04.1", "04.8", swap=swap)
        assert not passes(lesson04.repeat_stop, wrong["repeat_builder"]), swap
    by_name = solved("04", "04.5", swap=("evaluate(task, rg", "evaluate(task=task, code=rg"))
    assert passes(
        lesson04.sandbox_gate, by_name["tests_gate"]
    )  # the made-up score takes keywords too
    gate = solved("04", "04.5", swap=("ev.score == 10", "round(ev.score) == 10"))
    assert not passes(lesson04.sandbox_gate, gate["tests_gate"])
    reset = solved(
        "04", "04.6", swap=('    def chat(messages, role="generator", **params):\n',
                            '    def chat(messages, role="generator", **params):\n'
                            '        if role == "generator":\n            sent["refiner"] = 0\n'),
    )  # fmt: skip
    assert "count goes on" in lesson04.escalation.evaluate(reset["escalating"])[1]


def test_a_review_swallowing_its_interrupt_is_told_and_an_accepted_run_may_carry_a_status():
    """04.3: a review node that catches interrupt()'s exception ends without pausing, and the message says why; a
    loop whose accepted run leaves a status of its own is still right (only a spent budget must pause)."""
    swallowed = solved(
        "04", "04.1", "04.3",
        swap=('    decision = interrupt({"code": state["code"], "scores": state["scores"]})\n',
              '    try:\n        decision = interrupt({"code": state["code"], "scores": state["scores"]})\n'
              '    except Exception:\n        decision = {"action": "approve"}\n'),
    )  # fmt: skip
    message = lesson04.your_review.evaluate(
        swallowed["review_builder"], swallowed["resume_review"]
    )[1]
    assert "inside a try/except" in message, message
    marked = solved(
        "04", "04.1", "04.3",
        swap=[('            return END\n', '            return "done"\n'),
              ('["refine", END, out_of_budget]', '["refine", "done", out_of_budget]'),
              ('    builder.add_node("refine", refine)\n',
               '    builder.add_node("refine", refine)\n    builder.add_node("done", lambda s: {"status": "done"})\n'
               '    builder.add_edge("done", END)\n')],
    )  # fmt: skip
    assert passes(lesson04.your_review, marked["review_builder"], marked["resume_review"])


def test_a_memory_of_one_row_per_key_is_named():
    """05.5: INSERT OR REPLACE on a key that is the primary key keeps one reflection per task; the check names it."""
    ns = solved("05")
    exec(  # noqa: S102
        "def remember(db_path, key, session, reflections):\n"
        "    with sqlite3.connect(db_path) as db:\n"
        "        db.execute('CREATE TABLE IF NOT EXISTS m (key TEXT PRIMARY KEY, session TEXT, r TEXT)')\n"
        "        for r in reflections:\n"
        "            db.execute('INSERT OR REPLACE INTO m VALUES (?, ?, ?)', (key, session, r))\n"
        "def recall(db_path, key, window):\n"
        "    with sqlite3.connect(db_path) as db:\n"
        "        db.execute('CREATE TABLE IF NOT EXISTS m (key TEXT PRIMARY KEY, session TEXT, r TEXT)')\n"
        "        rows = [r for (r,) in db.execute('SELECT r FROM m WHERE key = ?', (key,))]\n"
        "    return rows[-window:] if window else []\n",
        ns,
    )
    message = lesson05.memory_round_trip.evaluate(ns["remember"], ns["recall"])[1]
    assert "one row per key" in message, message


def test_a_gate_reading_the_last_steps_code_fails():
    """04.5 (a sixth fresh read's): the gate tests rg.current_draft(state), which a revision in prose does not
    blank; one that reads the last step's code tests nothing there."""
    wrong = solved(
        "04", "04.5", swap=('rg.current_draft(state) or ""', 'state["steps"][-1]["code"] or ""')
    )
    message = lesson04.sandbox_gate.evaluate(wrong["tests_gate"])[1]
    assert "a revision in prose after a right draft" in message, message


def test_the_sixth_fresh_reads_wrong_answers_of_lesson_05_fail():
    """From a sixth fresh read of lesson 05 (/tmp/fresh05f): my_reflexion with a default window of 2 (a run given
    only its memory uses the defaults), and is_specific counting words split on single spaces."""
    loop = solved(
        "05",
        "05.1",
        "05.2",
        swap=("max_attempts=3, window=3, memory=()", "max_attempts=3, window=2, memory=()"),
    )
    assert not passes(lesson05.reflexion_loop, loop["my_reflexion"])
    spaced = solved("05", "05.7", swap=("len(text.split())", 'len(text.split(" "))'))
    assert not passes(lesson05.specific, spaced["is_specific"], [])


def test_the_seventh_fresh_reads_wrong_answers_of_lesson_05_fail():
    """From a seventh fresh read of lesson 05: drafts_found typing in each mode's counts (the made-up runs carry the
    modes' names now), or comparing drafts stripped; measure_windows leaving patience at its default (the agents
    run are read: a patience under max_attempts may stop a run); is_specific missing a double-quoted value."""
    modes = (
        "reflexion:none",
        "reflexion:reflections",
        "reflexion:last",
        "reflexion:last+reflections",
    )
    counts = {"reflexion:none": (15, 15, 0, 16), "reflexion:reflections": (14, 13, 9, 18)}
    found = solved("05", "05.4")["drafts_found"]
    assert lesson05.FOUND.problem(found) is None

    def typed(runs, hidden):
        return counts.get(runs[0].strategy) or found(runs, hidden) if runs else found(runs, hidden)

    assert lesson05.FOUND.problem(typed) is not None
    assert {c.args[0][0].strategy for c in lesson05.FOUND.cases} == set(modes)
    stripped = solved("05", "05.4", swap=("a == b", "a.strip() == b.strip()"))["drafts_found"]
    assert "byte for byte" in lesson05.FOUND.problem(stripped)
    fact = lesson05.get_task("factorial")
    for patience, right in (("", False), (", patience=40", True), (", patience=0", True)):
        window = solved("05", "05.6", swap=(", patience=9", patience))
        window["fact"], window["fact_tests"] = fact, lesson05.fact_tests
        window["window_chat"] = lesson05.window_chat
        ok, message = lesson05.memory_window.evaluate(
            window["measure_windows"], lesson05.window_chat, fact, lesson05.fact_tests
        )[:2]
        assert ok is right and (right or "patience=3 and max_attempts=4" in message), message
    spec = lesson05.SPECIFIC.problem(lambda t: lesson05._is_specific(t.replace('"', "")))
    assert spec and 'input "abc"' in spec, spec


def test_the_checks_of_lesson_05_leave_no_folder_behind(tmp_path, monkeypatch):
    """Their memory stores live in temporary folders that are removed (a class's /tmp used to gain about 200
    folders a run of the checks)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(lesson05, "MEMORY_DISK", str(tmp_path))
    for case in lesson05.LOOP.cases:  # the answer key, as the check runs it on every case
        (script, *args), kwargs = case.copies()
        lesson05._reflexion_key(lesson05.ScriptedChat(script), *args, **kwargs)
    store = lesson05.MemoryStore(tmp_path / "lesson.sqlite")
    assert "Rewordings share one key" in lesson05._recalled(lesson05._key_answer, store)
    store.close()
    assert [p.name for p in tmp_path.iterdir()] == ["lesson.sqlite"]


def test_the_seventh_fresh_reads_answers_of_lesson_04_are_told_what_they_did():
    """04.1 and 04.3 (a seventh fresh read's): `>` for `>=` is told that a score equal to the threshold accepts; a
    budget counted without the unusable critiques is told the loop stopped elsewhere, not to judge a draft once;
    a resume from a fresh checkpointer, or with the decision as the input, is told it started a new run."""
    strict = solved("04", "04.1", swap=("score >= threshold", "score > threshold"))
    message = lesson04.your_loop.evaluate(strict["loop_builder"])[1]
    assert "a score equal to the threshold does too" in message, message
    counted = solved(
        "04", "04.1",
        swap=('len(state["scores"]) >= max_iterations',
              'len([x for x in state["scores"] if x is not None]) >= max_iterations'),
    )  # fmt: skip
    message = lesson04.your_loop.evaluate(counted["loop_builder"])[1]
    assert "went on to" in message and "an unusable critique counts" in message, message
    for swap in (
        ("SqliteSaver(sqlite3.connect(db_path, check_same_thread=False))", "InMemorySaver()"),
        ("graph.invoke(Command(resume=decision),", "graph.invoke({'scores': []},"),
    ):
        wrong = solved("04", "04.1", "04.3", swap=swap)
        wrong["InMemorySaver"] = __import__(
            "langgraph.checkpoint.memory"
        ).checkpoint.memory.InMemorySaver
        ok, message = lesson04.your_review.evaluate(
            wrong["review_builder"], wrong["resume_review"]
        )[:2]
        assert not ok and "your resume started a new run" in message, (swap, message)


def test_the_eighth_fresh_reads_wrong_answers_of_lesson_05_fail():
    """05.5 (an eighth fresh read's): a recall that reads each file once and keeps its rows for the process (the
    check now recalls before the last session too), and a memory of one row per session, its reflections joined by
    newlines (a made-up reflection now holds a line break); 05.4: a retry compared with any earlier draft."""
    cached = solved("05", "05.5", swap=[("def recall(db_path, key, window):\n",
                                         "_KEPT = {}\n\n\ndef recall(db_path, key, window):\n    if db_path in _KEPT:\n"
                                         "        return _KEPT[db_path]\n    _KEPT[db_path] = _recall(db_path, key, window)\n"
                                         "    return _KEPT[db_path]\n\n\ndef _recall(db_path, key, window):\n")])  # fmt: skip
    assert not passes(lesson05.memory_round_trip, cached["remember"], cached["recall"])
    joined = solved("05", "05.5")
    remember, recall = joined["remember"], joined["recall"]

    def one_row(db_path, key, session, reflections):
        return remember(db_path, key, session, ["\n".join(reflections)] if reflections else [])

    def split(db_path, key, window):
        rows = [x for r in recall(db_path, key, 10**6) for x in r.split("\n")]
        return rows[-window:] if window else []

    assert not passes(lesson05.memory_round_trip, one_row, split)
    assert passes(lesson05.memory_round_trip, remember, recall)
    found = solved("05", "05.4", swap=("sum(a == b for a, b in retries)",
                                       "sum(d in r.drafts[:i] for r in runs for i, d in enumerate(r.drafts) if i)"))  # fmt: skip
    assert "not any earlier one" in lesson05.FOUND.problem(found["drafts_found"])


def test_the_eighth_fresh_reads_wrong_answers_of_lesson_04_fail():
    """04.1: the critic shown task.prompt() for the task; 04.3: a resume that writes the outcome with update_state
    (the review node never carries out the decision); 04.8: a repeat flag kept in the builder, which a compiled
    graph run again carries over."""
    prompt = solved("04", "04.1", swap=('critic.evaluate(task, state["code"])', 'critic.evaluate(task.prompt(), state["code"])'))  # fmt: skip
    ok, message = lesson04.your_loop.evaluate(prompt["loop_builder"])[:2]
    assert not ok and "give it the Task itself" in message, message
    forged = solved("04", "04.1", "04.3", swap=(
        "    return graph.invoke(Command(resume=decision), {\"configurable\": {\"thread_id\": thread_id}})",
        "    cfg = {\"configurable\": {\"thread_id\": thread_id}}\n"
        "    status = {\"approve\": \"approved\", \"edit\": \"edited\", \"reject\": \"rejected\"}[decision[\"action\"]]\n"
        "    update = {\"status\": status, **({\"code\": decision[\"code\"]} if decision[\"action\"] == \"edit\" else {})}\n"
        "    graph.update_state(cfg, update, as_node=\"review\")\n    return graph.get_state(cfg).values"))  # fmt: skip
    ok, message = lesson04.your_review.evaluate(forged["review_builder"], forged["resume_review"])[
        :2
    ]
    assert not ok and "update_state" in message, message
    right = solved("04", "04.1", "04.8")
    assert passes(lesson04.repeat_stop, right["repeat_builder"])
