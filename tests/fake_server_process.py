"""A model-free stand-in for `course_runtime.server_process`: the real command line, key handling,
supervisor and idle watchdog (from course_runtime.server_process) around a tiny engine that speaks
llama.cpp's server API (/health, /props, /metrics and a /v1/chat/completions that echoes).
Used by test_manager.py to test the server manager fast.

The model file's name scripts a failure: "crash" cannot be loaded (exit 3); "segv" kills the
xllamacpp engine at start; "badfirst" makes the xllamacpp engine answer 500 to every chat
request. The llama-server engine never fails, so a fallback to it can be tested."""

import json
import os
import signal
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from course_runtime import server_process as serve


class EchoEngine(serve.Engine):
    def __init__(self, name: str):
        self.name = name
        self.tokens = 0

    def start(self, s: serve.EngineSettings) -> None:
        if "crash" in s.model:
            print("fake_server_process: cannot load model", flush=True)
            raise SystemExit(serve.EXIT_MODEL)
        if "segv" in s.model and self.name == "xllamacpp":
            os.kill(os.getpid(), signal.SIGSEGV)
        broken = "badfirst" in s.model and self.name == "xllamacpp"
        engine = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, code, body, ctype="application/json"):
                data = (body if isinstance(body, str) else json.dumps(body)).encode()
                self.send_response(code)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def authorized(self):
                if self.headers.get("Authorization") == f"Bearer {s.key}":
                    return True
                self.reply(401, {"error": {"message": "Invalid API Key", "code": 401}})
                return False

            def do_GET(self):
                if self.path == "/health":
                    self.reply(200, {"status": "ok"})
                elif self.authorized() and self.path == "/props":
                    self.reply(
                        200, {"model_path": s.model, "total_slots": s.slots, "engine": engine.name}
                    )
                elif self.path == "/metrics":
                    self.reply(
                        200,
                        f"llamacpp:prompt_tokens_total {engine.tokens}\nllamacpp:requests_processing 0\n",
                        "text/plain",
                    )

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                if not self.authorized():
                    return
                if broken:
                    self.reply(500, {"error": {"message": "broken engine"}})
                    return
                engine.tokens += 2
                text = body["messages"][-1]["content"]
                self.reply(
                    200,
                    {
                        "id": "x",
                        "object": "chat.completion",
                        "created": 0,
                        "model": s.alias,
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": text},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    },
                )

        self.httpd = ThreadingHTTPServer(("127.0.0.1", s.port), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if hasattr(self, "httpd"):
            self.httpd.shutdown()


def main() -> None:
    args = serve.parse()
    code = serve.supervise(
        EchoEngine(args.engine), serve.settings_from(args), args.idle_minutes, args.state_file
    )
    raise SystemExit(code)


if __name__ == "__main__":
    main()
