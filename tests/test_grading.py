"""Exercise check cells: the verdict, and hints that come one tier per failed run."""

from reflect.notebook.grading import grade, reset_hints


def run(capsys, *args):
    grade(*args)
    return capsys.readouterr().out


def test_success_prints_the_success_line_only(capsys):
    reset_hints()
    assert run(capsys, True, "well done", "nudge", "answer") == "✅ well done\n"


def test_one_hint_is_shown_whole(capsys):
    reset_hints()
    assert run(capsys, False, "ok", "look at finish_reason") == "❌ Not yet. Hint: look at finish_reason\n"


def test_hints_come_one_tier_per_failed_run_and_stop_at_the_answer(capsys):
    reset_hints()
    first = run(capsys, False, "ok", "nudge", "bigger", "answer")
    assert first == "❌ Not yet. Hint 1 of 3: nudge\n(Run this cell again for the next hint.)\n"
    second = run(capsys, False, "ok", "nudge", "bigger", "answer")
    assert "Hint 2 of 3: bigger" in second and "answer" not in second
    third = run(capsys, False, "ok", "nudge", "bigger", "answer")
    assert third.splitlines()[-1] == "Hint 3 of 3: answer" and "Run this cell again" not in third
    assert run(capsys, False, "ok", "nudge", "bigger", "answer") == third


def test_exercises_keep_their_own_tiers_and_success_resets(capsys):
    reset_hints()
    run(capsys, False, "ok", "nudge A", "answer A")
    assert run(capsys, False, "ok", "nudge B", "answer B") == (
        "❌ Not yet. Hint 1 of 2: nudge B\n(Run this cell again for the next hint.)\n")
    assert "answer A" in run(capsys, False, "ok", "nudge A", "answer A")
    run(capsys, True, "ok", "nudge A", "answer A")
    assert "answer A" not in run(capsys, False, "ok", "nudge A", "answer A")
