"""In a learner's notebook, a cell that fails because a build above is not written yet says so in one line,
instead of a traceback from deep inside the course's code: an unfinished build stops only the cells that
need it. Installed by `import course_checks` inside IPython; every other error shows its traceback as usual."""

from __future__ import annotations

import ast
import dis
import types

_EMPTY = (
    [("LOAD_CONST", None), ("RETURN_VALUE", None)],
    [("RETURN_CONST", None)],
)  # Python 3.11 / 3.12+


def unfinished(value: object) -> bool:
    """Is `value` a placeholder still: a notebook function whose body is only `...` (a docstring allowed:
    the code returns None and does nothing else), or `...` itself?"""
    if value is Ellipsis:
        return True
    if not isinstance(value, types.FunctionType) or value.__module__ != "__main__":
        return False
    steps = [
        (i.opname, i.argval)
        for i in dis.get_instructions(value)
        if i.opname not in ("RESUME", "NOP", "CACHE")
    ]
    return steps in _EMPTY


def unfinished_in(namespace: dict, source: str) -> tuple[list[str], list[str]]:
    """(the unfinished builds a cell's source names, every unfinished build in the namespace)."""
    try:
        named = {
            n.id
            for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        }
    except SyntaxError:
        named = set()
    everywhere = sorted(k for k, v in namespace.items() if not k.startswith("_") and unfinished(v))
    return sorted(k for k in named if k in everywhere), everywhere


def message(namespace: dict, source: str, error: BaseException) -> str | None:
    """The one line a failed cell prints when an unfinished build explains it, else None."""
    named, everywhere = unfinished_in(namespace, source)
    if named:
        return (
            f"⏸ This cell needs {', '.join(f'`{n}`' for n in named)}, not written yet (its cell above still "
            "holds `...`): write it, run its check, then run this cell again."
        )
    if isinstance(error, NameError) and everywhere:
        return (
            f"⏸ {error} yet: a cell above that makes it did not run, and these builds are not written yet: "
            f"{', '.join(f'`{n}`' for n in everywhere)}."
        )
    return None


def install(shell) -> None:  # noqa: ANN001 - an IPython InteractiveShell
    """Show one line instead of a traceback when an unfinished build explains a cell's error."""

    def handler(self, etype, value, tb, tb_offset=None):  # noqa: ANN001 - IPython's custom_exc signature
        line = message(
            self.user_ns,
            self.user_ns.get("_ih", [""])[-1] if self.user_ns.get("_ih") else "",
            value,
        )
        if line is None:
            self.showtraceback((etype, value, tb), tb_offset=tb_offset)
        else:
            print(line)

    shell.set_custom_exc((Exception,), handler)
