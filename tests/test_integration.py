"""The real local model: start the llama.cpp server, chat, and schema-constrained JSON.

Slow (loads the 1.1 GB model); part of `make test`. Skipped only if the local extra is not
installed, with a message saying so.
"""

import json

import pytest

from reflect import connect
from reflect.model import server
from reflect.model.config import Settings
from reflect.model.extract import extract_code
from reflect.tasks.task import get_task

pytestmark = pytest.mark.integration

try:
    import llama_cpp  # noqa: F401
except ImportError:  # pragma: no cover
    pytest.skip('llama-cpp-python is not installed: pip install -e ".[local]"', allow_module_level=True)


@pytest.fixture(scope="module")
def conn(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    for var in ("OPENAI_API_KEY", "COURSE_BACKEND", "COURSE_MODEL_PATH"):
        mp.delenv(var, raising=False)
    mp.setenv("COURSE_STATE_DIR", str(tmp_path_factory.mktemp("state")))  # our own server, stopped after
    c = connect(settings=Settings.from_env({"COURSE_BACKEND": "local"}))
    yield c
    server.stop_server()
    mp.undo()


def test_server_runs_the_bundled_model(conn):
    state = server.read_state()
    assert state and server.health(state)
    assert conn.model == "qwen2.5-coder-1.5b-instruct-q4_k_m"
    assert conn.base_url.startswith("http://127.0.0.1:")


def test_chat_completion_writes_working_code(conn):
    task = get_task("count_vowels")
    reply = conn.chat([{"role": "user", "content": task.prompt()}], role="generator", temperature=0, seed=1,
                      max_tokens=300)
    assert reply.prompt_tokens > 0 and reply.completion_tokens > 0
    code = extract_code(reply.text, task.entry_point)
    assert code.found, reply.text
    assert task.run(code.code).passed, task.run(code.code).feedback()


def test_plain_openai_client_works(conn):
    client, model = conn
    out = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "Say OK."}],
                                         max_tokens=5, temperature=0)
    assert out.choices[0].message.content.strip()


def test_schema_constrained_json(conn):
    schema = {
        "type": "object",
        "properties": {"score": {"type": "integer"}, "issues": {"type": "array", "items": {"type": "string"}}},
        "required": ["score", "issues"],
    }
    reply = conn.chat(
        [{"role": "system", "content": "You review Python code. Answer in JSON."},
         {"role": "user", "content": "Rate 1-10: def add(a, b): return a - b"}],
        role="critic", temperature=0, max_tokens=200, response_format=conn.response_format(schema, "review"),
    )
    data = json.loads(reply.text)
    assert isinstance(data["score"], int) and isinstance(data["issues"], list)
    assert all(isinstance(i, str) for i in data["issues"])
