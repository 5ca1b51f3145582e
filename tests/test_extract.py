"""Getting code out of model replies, including property-based tests over generated replies."""

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reflect.tasks.extract import extract_code

FN = "def add(a, b):\n    return a + b\n"


def test_python_fence():
    assert extract_code(f"Here you go:\n```python\n{FN}```\nHope it helps.").code == FN


def test_py_and_bare_fences():
    assert extract_code(f"```py\n{FN}```").code == FN
    assert extract_code(f"```\n{FN}```").code == FN


def test_other_language_fence_is_ignored():
    res = extract_code("```bash\npip install x\n```\nNo python here.")
    assert not res.found and res.source == "none"


def test_prose_only_is_a_clear_no_code_result():
    res = extract_code("I think the function should handle negatives first.")
    assert not res.found
    assert res.reason == "The reply has no Python code (prose only)."


def test_empty_reply():
    assert extract_code("").reason == "The reply is empty."
    assert extract_code(None).reason == "The reply is empty."


def test_block_with_entry_point_is_chosen_and_helpers_joined():
    helper = "def _merge(a, b):\n    return a + b\n"
    main = "def merge_sorted_lists(x, y):\n    return _merge(x, y)\n"
    example = "print(merge_sorted_lists([1], [2]))\n"
    reply = f"```python\n{helper}```\nand\n```python\n{main}```\nUsage:\n```python\n{example}```"
    res = extract_code(reply, "merge_sorted_lists")
    assert res.source == "fenced-joined"
    assert "def _merge" in res.code and "def merge_sorted_lists" in res.code
    assert "print(" not in res.code


def test_trailing_examples_inside_the_block_are_dropped():
    code = (
        FN
        + "\nprint(add(1, 2))\nassert add(1, 1) == 2\nif __name__ == '__main__':\n    print(add(2, 2))\n"
    )
    res = extract_code(f"```python\n{code}```")
    assert res.code == FN


def test_decorated_function_keeps_its_decorator():
    code = "import functools\n\n@functools.cache\ndef f(n):\n    return n\n\nprint(f(1))\n"
    assert "@functools.cache" in extract_code(f"```python\n{code}```").code


def test_unfenced_code_after_prose():
    reply = "Sure! Here is the function:\n\n" + FN + "\nThis adds two numbers."
    res = extract_code(reply)
    assert res.source == "bare" and "def add" in res.code


def test_unclosed_fence_from_a_cut_off_reply():
    res = extract_code("```python\n" + FN)
    assert res.source == "unclosed-fence" and res.code == FN


def test_tilde_fence():
    assert extract_code(f"~~~python\n{FN}~~~").code == FN


names = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True).filter(
    lambda s: s not in {"if", "in", "is", "or", "as", "def", "for", "and", "not"}
)
prose = st.text(
    alphabet=st.characters(blacklist_characters="`~", blacklist_categories=("Cs",)), max_size=200
)


@settings(max_examples=150, deadline=None)
@given(name=names, before=prose, after=prose, lang=st.sampled_from(["python", "py", "", "Python"]))
def test_any_prose_around_a_fenced_function(name, before, after, lang):
    fn = f"def {name}(x):\n    return x\n"
    reply = f"{before}\n```{lang}\n{fn}```\n{after}"
    res = extract_code(reply, name)
    assert res.found
    assert name in {n.name for n in ast.parse(res.code).body if isinstance(n, ast.FunctionDef)}


@settings(max_examples=150, deadline=None)
@given(reply=st.text(max_size=400))
def test_never_raises_on_arbitrary_text(reply):
    res = extract_code(reply)
    assert isinstance(res.code, str)
    assert res.found == bool(res.code.strip())


@settings(max_examples=100, deadline=None)
@given(text=prose)
def test_prose_without_code_gives_no_code(text):
    res = extract_code(
        text.replace("def ", "de f")
        .replace("class ", "cla ss")
        .replace("import ", "imp ort")
        .replace("from ", "fr om")
    )
    assert not res.found


def test_a_parse_overlapped_by_another_threads_is_tried_again(monkeypatch):
    """CPython 3.11's AST converter counts recursion in one process-wide state: a parse that code outside the
    package overlapped fails with 'recursion depth mismatch', and parse_python tries it once more."""
    import ast

    from reflect.records import parse_python

    real, failures = ast.parse, ["AST constructor recursion depth mismatch (before=63, after=54)"]

    def flaky(source, *args, **kwargs):
        if failures:
            raise SystemError(failures.pop())
        return real(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", flaky)
    assert isinstance(parse_python("x = 1\n"), ast.Module)
    failures.append("another SystemError")
    with pytest.raises(SystemError, match="another"):
        parse_python("x = 1\n")
