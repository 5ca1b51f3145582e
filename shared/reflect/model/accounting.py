"""Every model call, counted: role, tokens, latency, backend, model, and a cost estimate."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

# USD per 1M tokens (input, output), list prices as published by OpenAI in 2025.
# Local and replayed-local calls cost nothing; an unknown hosted model shows no cost.
PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "o4-mini": (1.10, 4.40),
}


@dataclass(frozen=True)
class CallRecord:
    """One model call as the ledger keeps it: role, tokens, latency, backend, model, sampling."""

    role: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    backend: str  # the live backend that produced the answer (local or openai)
    model: str
    # answered from the live request cache (course_runtime.response_cache): no model time spent
    cached: bool = False
    # the sampling the call was sent with: (name, value) pairs of temperature, seed, max_tokens
    sampling: tuple[tuple[str, object], ...] = ()
    replayed: bool = False  # answered from a cassette: its latency is the recording's

    @property
    def cost_usd(self) -> float | None:
        """The call's estimated cost in USD (None for an unknown hosted model)."""
        return estimate_cost(self.backend, self.model, self.prompt_tokens, self.completion_tokens)


def estimate_cost(
    backend: str, model: str, prompt_tokens: int, completion_tokens: int
) -> float | None:
    """USD for a call from the price table; 0 on the local model, None if the price is unknown."""
    if backend == "local":
        return 0.0
    price = PRICES_PER_MTOK.get(model)
    if price is None:
        return None
    return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000


@dataclass
class Ledger:
    """The calls of one run, in order. `summary()` groups them per role with a total row."""

    records: list[CallRecord] = field(default_factory=list)

    def add(self, record: CallRecord) -> None:
        """Record one call."""
        self.records.append(record)

    def since(self, start: int) -> Ledger:
        """The calls made after the ledger had `start` records: `n = len(ledger.records)` first."""
        return Ledger(self.records[start:])

    @property
    def total_tokens(self) -> int:
        """Prompt + completion tokens of every recorded call."""
        return sum(r.prompt_tokens + r.completion_tokens for r in self.records)

    def model_time(self) -> str:
        """One line for the end of a lesson: calls, tokens and seconds spent in the model.

        In replay the latencies are the recorded ones, so the line states what the recording
        cost live, and says so: "(replayed)" when every call was, else how many were."""
        secs = sum(r.latency_s for r in self.records if not r.cached)
        about = "under a minute" if secs < 60 else f"about {round(secs / 60)} min"
        replayed = sum(r.replayed for r in self.records)
        if replayed:
            about += (
                ", replayed: the recording's time"
                if replayed == len(self.records)
                else f"; {replayed} of the calls replayed, at the recording's time"
            )
        hits = [r for r in self.records if r.cached]
        from_cache = (
            f" ({len(hits)} answered from the cache, {sum(r.prompt_tokens + r.completion_tokens for r in hits):,} tokens)"
            if hits
            else ""
        )
        n = len(self.records)
        return (
            f"{n} model call{'' if n == 1 else 's'}{from_cache}, {self.total_tokens:,} tokens, "
            f"{secs:.0f} s of model time ({about})"
        )

    def summary(self) -> list[dict]:
        """Calls, tokens, latency and cost per role, plus a total row."""
        groups: dict[str, list[CallRecord]] = defaultdict(list)
        for r in self.records:
            groups[r.role].append(r)
        rows = [_row(role, recs) for role, recs in groups.items()]
        if rows:
            rows.append(_row("total", self.records))
        return rows

    def table(self) -> str:
        """The summary as a fixed-width text table (stable for notebook outputs)."""
        head = f"{'role':<12}{'calls':>6}{'prompt':>9}{'compl.':>9}{'total':>9}{'latency s':>11}{'cost $':>10}"
        lines = [head, "-" * len(head)]
        for row in self.summary():
            cost = "n/a" if row["cost_usd"] is None else f"{row['cost_usd']:.4f}"
            lines.append(
                f"{row['role']:<12}{row['calls']:>6}{row['prompt_tokens']:>9}{row['completion_tokens']:>9}"
                f"{row['total_tokens']:>9}{row['latency_s']:>11.1f}{cost:>10}"
            )
        return "\n".join(lines)


def _row(role: str, recs: list[CallRecord]) -> dict:
    costs = [r.cost_usd for r in recs]
    return {
        "role": role,
        "calls": len(recs),
        "prompt_tokens": sum(r.prompt_tokens for r in recs),
        "completion_tokens": sum(r.completion_tokens for r in recs),
        "total_tokens": sum(r.prompt_tokens + r.completion_tokens for r in recs),
        "latency_s": sum(r.latency_s for r in recs),
        "cost_usd": None if any(c is None for c in costs) else sum(costs),
    }
