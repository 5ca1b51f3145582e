"""A separate process for tests/test_graph.py: pause a review in one process, resume it in another.

    python -m tests.graph_process pause DB THREAD   # run until the human-review interrupt, then exit
    python -m tests.graph_process resume DB THREAD  # open the same SQLite file, approve, print the result

The resuming process has a chat function that fails on any call: resuming must not call the model.
"""

from __future__ import annotations

import json
import sqlite3
import sys

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from reflect.judging.critics import Evaluation
from reflect.strategies.graph import GraphParts, build_graph, run_config, start_state
from reflect.tasks.task import get_task
from reflect.testing import ScriptedChat

TASK = get_task("factorial")
DRAFT = '```python\ndef calculate_factorial(n):\n    """n!"""\n    if n < 0:\n        raise ValueError(n)\n    return 1\n```'


class AlwaysSix:
    """A critic that always asks for changes (score 6)."""

    def evaluate(self, task, code):
        return Evaluation(6, "handle negative input", raw='{"score": 6}')


def graph(db: str, chat):
    saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
    return build_graph(
        GraphParts(chat, AlwaysSix(), human_review=True, task=TASK), checkpointer=saver
    )


def main() -> None:
    mode, db, thread = sys.argv[1:4]
    config = run_config(2, thread)
    if mode == "pause":
        chat = ScriptedChat(
            {"generator": [DRAFT], "refiner": [DRAFT.replace("return 1", "return 2")]}
        )
        out = graph(db, chat).invoke(start_state(TASK.prompt(), 2), config)
        print(json.dumps({"paused": "__interrupt__" in out, "calls": len(chat.calls)}))
    else:
        chat = ScriptedChat({})  # any model call raises IndexError
        out = graph(db, chat).invoke(Command(resume={"action": "approve"}), config)
        print(
            json.dumps(
                {"status": out["status"], "final": out["final_output"], "calls": len(chat.calls)}
            )
        )


if __name__ == "__main__":
    main()
