"""DraftLog: every generator or refiner reply is kept as a draft, in order, and judged by the hidden tests
only when asked; other roles pass through unkept; the step-through shows the diff to the draft before."""

from reflect.notebook import DraftLog
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
