"""Get Python code out of a model reply: fenced blocks, several blocks, prose with code and no fence, or
prose only. `extract_code` never raises: prose only gives empty code with a reason, so a loop can quote it back.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ..records import parsed

_FENCE = re.compile(
    r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+.-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.S | re.M
)
_OPEN_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+.-]*)[^\n]*\n(.*)\Z", re.S | re.M)
_PY_LANGS = {"", "python", "py", "python3", "py3"}


@dataclass(frozen=True)
class _Extraction:
    """The code found in a model reply, or why none was found."""

    code: str
    source: str  # "fenced", "fenced-joined", "unclosed-fence", "bare", "none"
    reason: str = ""

    @property
    def found(self) -> bool:
        """True if the reply held code."""
        return bool(self.code.strip())


def _defines(code: str) -> set[str]:
    tree = parsed(code)
    if tree is None:
        return {
            m.group(1)
            for m in re.finditer(r"^\s*(?:async\s+)?def\s+(\w+)|^\s*class\s+(\w+)", code, re.M)
            if m.group(1)
        }
    return {
        n.name
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }


def _strip_examples(code: str) -> str:
    """Drop top-level example usage (prints, asserts, __main__ blocks) that follows the definitions."""
    tree = parsed(code)
    if tree is None:
        return code
    keep = []
    for node in tree.body:
        if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test):
            continue
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and getattr(node.value.func, "id", "") == "print"
        ):
            continue
        if isinstance(node, ast.Assert):
            continue
        keep.append(node)
    if len(keep) == len(tree.body):
        return code
    lines = code.splitlines()
    out = []
    for n in keep:
        first = min([n.lineno] + [d.lineno for d in getattr(n, "decorator_list", [])])
        out.append("\n".join(lines[first - 1 : n.end_lineno]))
    return "\n".join(out).strip() + "\n"


def extract_code(reply: str, entry_point: str | None = None) -> _Extraction:
    """The code in `reply` that a test run should use (see module docstring)."""
    if not reply or not reply.strip():
        return _Extraction("", "none", "The reply is empty.")
    blocks = [m.group(3) for m in _FENCE.finditer(reply) if m.group(2).lower() in _PY_LANGS]
    source = "fenced"
    if not blocks:
        m = _OPEN_FENCE.search(reply)  # a reply cut off by max_tokens leaves the fence open
        if m and m.group(2).lower() in _PY_LANGS and m.group(3).strip():
            blocks, source = [m.group(3)], "unclosed-fence"
    if not blocks:
        bare = _bare_code(reply)
        if bare:
            blocks, source = [bare], "bare"
    blocks = [b.strip("\n") for b in blocks if b.strip()]
    if not blocks:
        return _Extraction("", "none", "The reply has no Python code (prose only).")
    if len(blocks) > 1:
        with_defs = [b for b in blocks if _defines(b)]
        main = next((b for b in blocks if entry_point and entry_point in _defines(b)), None)
        if main is not None:
            helpers = [b for b in with_defs if b is not main and not (_defines(b) & _defines(main))]
            code, source = "\n\n".join([*helpers, main]), ("fenced-joined" if helpers else "fenced")
        elif with_defs:
            code, source = (
                "\n\n".join(with_defs),
                "fenced-joined" if len(with_defs) > 1 else "fenced",
            )
        else:
            code = blocks[0]
    else:
        code = blocks[0]
    return _Extraction(_strip_examples(code).rstrip() + "\n", source)


def _bare_code(reply: str) -> str:
    """Code written without fences: the longest run of lines, from a def/class/import, that parses."""
    lines = reply.splitlines()
    starts = [
        i for i, ln in enumerate(lines) if re.match(r"^(async\s+def|def|class|import|from)\s", ln)
    ]
    best = ""
    for s in starts:
        for e in range(len(lines), s, -1):
            chunk = "\n".join(lines[s:e]).strip()
            if chunk and parsed(chunk) is not None and _defines(chunk):
                if len(chunk) > len(best):
                    best = chunk
                break
    return best
