"""The client: settings (`config`), the connection (`connect`, `chat`), accounting, replay cassettes,
the live request cache and the sampling of each role. The local server it talks to by default is
started by `course_runtime`, which passes its starter in (`reflect.connect`): this layer never imports it."""

from .accounting import PRICES_PER_MTOK, estimate_cost
from .config import repo_root
from .llm import Reply
from .roles import SAMPLING, sampling

__all__ = ["PRICES_PER_MTOK", "Reply", "SAMPLING", "estimate_cost", "repo_root", "sampling"]
