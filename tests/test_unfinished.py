"""An unfinished build stops only the cells that need it, with one line naming it: a cell that calls a
placeholder (a body of `...`) or uses a name a failed cell never made prints one line, not a traceback;
any other error keeps its traceback."""

from __future__ import annotations

import pytest

IPython = pytest.importorskip("IPython")


@pytest.fixture
def shell():
    from IPython.core.interactiveshell import InteractiveShell

    from course_checks.unfinished import install

    sh = InteractiveShell.instance()
    install(sh)
    yield sh
    sh.set_custom_exc((), None)
    InteractiveShell.clear_instance()


def run(shell, source, capsys):
    shell.run_cell(source, store_history=True)
    return capsys.readouterr()


def test_a_cell_that_needs_an_unfinished_build_says_so_in_one_line(shell, capsys):
    run(shell, "def fresh_chat(chat):\n    ...  # your code", capsys)
    out = run(shell, "wrapped = fresh_chat(print)\nwrapped('hi', 'generator')", capsys)
    text = out.out + out.err
    assert "needs `fresh_chat`, not written yet" in text and "Traceback" not in text
    out = run(shell, "print(repairs.report())", capsys)  # a name the failed cell would have made
    text = out.out + out.err
    assert (
        "name 'repairs' is not defined yet" in text
        and "`fresh_chat`" in text
        and "Traceback" not in text
    )


def test_a_written_build_and_other_errors_keep_their_traceback(shell, capsys):
    run(shell, "def fresh_chat(chat):\n    return chat", capsys)
    out = run(shell, "fresh_chat(1)(2)", capsys)
    text = out.out + out.err
    assert "not written yet" not in text and "TypeError" in text
    out = run(shell, "with_code = ...\nprint(undefined_name)", capsys)
    assert "is not defined yet" in out.out + out.err  # `...` is a placeholder value too
    run(shell, "with_code = 3", capsys)
    out = run(shell, "print(undefined_name)", capsys)
    assert "not defined yet" not in out.out + out.err and "NameError" in out.out + out.err
