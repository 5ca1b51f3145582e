"""A model-free stand-in for `reflect.model.serve`: the same health route, activity tracking and
idle watchdog (the real ones from reflect.model.serve), around a tiny FastAPI app with a
/v1/chat/completions that echoes. Used by test_server.py to test the server manager fast."""

import argparse
import sys

from fastapi import FastAPI

from reflect.model import serve


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--alias", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--idle-minutes", type=float, default=30.0)
    p.add_argument("--state-file", default=None)
    args = p.parse_args()
    if "crash" in args.model:
        print("fake_serve: cannot load model", file=sys.stderr, flush=True)
        sys.exit(3)
    app = FastAPI()
    state = serve.new_state()
    serve.add_course_routes(app, args.model, args.alias, state)

    @app.post("/v1/chat/completions")
    def chat(body: dict) -> dict:
        text = body["messages"][-1]["content"]
        return {"id": "x", "object": "chat.completion", "created": 0, "model": args.alias,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}

    serve.run(app, args.port, args.idle_minutes, state, args.state_file)


if __name__ == "__main__":
    main()
