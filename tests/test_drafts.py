"""DraftLog: every generator or refiner reply is kept as a draft, in order, and judged by the hidden tests
only when asked; other roles pass through unkept; the step-through shows the diff to the draft before."""

from course_notebook import DraftLog
from reflect.tasks.task import get_task
from reflect.testing import ScriptedChat

WRONG = "```python\ndef calculate_factorial(n):\n    return n\n```"
RIGHT = '```python\ndef calculate_factorial(n):\n    """n!"""\n    if n < 0:\n        raise ValueError(n)\n    out = 1\n    for k in range(2, n + 1):\n        out *= k\n    return out\n```'


def test_drafts_are_kept_in_order_and_judged_by_the_hidden_tests():
    task = get_task("factorial")
    chat = ScriptedChat(
        {"generator": [WRONG, WRONG, WRONG], "reviewer": ["no"], "refiner": [RIGHT]}
    )
    log = DraftLog(chat, task)
    log([{"role": "user", "content": "write it"}], role="generator")
    log([{"role": "user", "content": "review"}], role="reviewer")
    log([{"role": "user", "content": "again"}], "generator", temperature=0.6, seed=43)
    log([{"role": "user", "content": "once more"}], role="generator")
    log([{"role": "user", "content": "fix it"}], role="refiner")
    assert [d.role for d in log.drafts] == ["generator", "generator", "generator", "refiner"]
    assert chat.calls[2].params == {
        "temperature": 0.6,
        "seed": 43,
    }  # the call's own sampling passes through
    assert log.verdicts() == ["FAIL", "FAIL", "FAIL", "pass"]
    assert log.unchanged() == 2
    assert (
        log.line().startswith("factorial")
        and "['FAIL', 'FAIL', 'FAIL', 'pass'], 2 sent back unchanged" in log.line()
    )
    shown = log.show()
    assert "draft 4 (refiner), hidden tests: pass" in shown and "asked: fix it" in shown
    assert "(the same code as the draft before)" in shown and "+    out = 1" in shown


def test_a_sweep_counts_rejections_repairs_and_what_the_loop_returned():
    from course_notebook import sweep
    from reflect.evaluation import load_attempts

    one_shot = {
        a.task_id: a.code for a in load_attempts("01_one_shot")
    }  # palindrome and merge_sorted pass
    fence = lambda code: f"```python\n{code}```"  # noqa: E731
    tasks = [get_task(t) for t in ("factorial", "fibonacci", "palindrome", "merge_sorted")]
    wrong_fib = fence("def fibonacci(n):\n    return n\n")
    drafts = {
        "factorial": [WRONG, RIGHT],  # rejected, repaired
        "fibonacci": [wrong_fib],  # kept at once, wrong
        "palindrome": [fence(one_shot["palindrome"])] * 2,  # rejected though right: not a repair
        "merge_sorted": [fence(one_shot["merge_sorted"])],  # kept at once, right: not a repair
    }

    def loop(log, task):
        replies = [
            log([{"role": "user", "content": task.prompt()}], role="generator")
            for _ in drafts[task.id]
        ]
        return log.drafts[-1].code if replies else ""

    chat = ScriptedChat({"generator": [d for t in tasks for d in drafts[t.id]]})
    done = sweep(loop, chat, tasks)
    assert done.rejected == ["factorial", "palindrome"] and done.repaired == ["factorial"]
    assert done.final == {
        "factorial": True,
        "fibonacci": False,
        "palindrome": True,
        "merge_sorted": True,
    }
    report = done.report().splitlines()
    assert (
        report[0].startswith("factorial")
        and "['FAIL', 'pass']" in report[0]
        and report[0].endswith("returned: pass")
    )
    assert report[2] == (
        "2 of 4 first drafts rejected; a later draft passed the hidden tests on 1 of the 1 rejected that failed them. "
        "The loop ends at 3 of 4, its first drafts at 2 of 4"
    )


def test_each_draft_is_judged_once_however_often_the_verdicts_are_read(monkeypatch):
    import course_notebook.drafts as drafts

    judged = []
    real = drafts.judge
    monkeypatch.setattr(drafts, "judge", lambda task, code: judged.append(code) or real(task, code))
    log = DraftLog(ScriptedChat({"generator": [WRONG, RIGHT]}), get_task("factorial"))
    log([{"role": "user", "content": "write it"}], role="generator")
    assert log.verdicts() == ["FAIL"]
    log([{"role": "user", "content": "again"}], role="generator")
    log.line(), log.show(), log.verdicts()
    assert len(judged) == 2  # one sandbox run per draft, the new one judged when it came
