from reflect.model.accounting import CallRecord, Ledger, estimate_cost


def test_local_is_free_and_unknown_hosted_model_has_no_price():
    assert estimate_cost("local", "anything", 10_000, 10_000) == 0.0
    assert estimate_cost("openai", "mystery-model", 1, 1) is None
    assert estimate_cost("openai", "gpt-4o-mini", 1_000_000, 1_000_000) == 0.75


def test_summary_per_role_and_total():
    led = Ledger()
    led.add(CallRecord("generator", 100, 50, 2.0, "local", "m"))
    led.add(CallRecord("critic", 200, 10, 1.0, "local", "m"))
    led.add(CallRecord("generator", 300, 40, 3.0, "local", "m"))
    rows = {r["role"]: r for r in led.summary()}
    assert rows["generator"] == {
        "role": "generator",
        "calls": 2,
        "prompt_tokens": 400,
        "completion_tokens": 90,
        "total_tokens": 490,
        "latency_s": 5.0,
        "cost_usd": 0.0,
    }
    assert rows["total"]["total_tokens"] == 700 and led.total_tokens == 700
    assert list(rows) == ["generator", "critic", "total"]
    assert led.since(2).records == led.records[2:]


def test_table_shows_na_for_unknown_cost():
    led = Ledger([CallRecord("critic", 1, 1, 0.1, "openai", "mystery")])
    assert "n/a" in led.table().splitlines()[2]


def test_empty_ledger():
    assert Ledger().summary() == []


def test_model_time_sums_every_call_and_rounds_to_minutes():
    ledger = Ledger()
    ledger.add(CallRecord("generator", 1000, 200, 200.4, "local", "m"))
    ledger.add(CallRecord("critic", 500, 34, 120.3, "local", "m"))
    assert ledger.model_time() == "2 model calls, 1,734 tokens, 321 s of model time (about 5 min)"
    assert Ledger().model_time() == "0 model calls, 0 tokens, 0 s of model time (under a minute)"
    assert (
        ledger.since(1).model_time()
        == "1 model call, 534 tokens, 120 s of model time (about 2 min)"
    )


def test_a_call_answered_from_the_cache_spends_no_model_time_and_is_counted():
    ledger = Ledger(
        [
            CallRecord("generator", 1000, 200, 200.0, "local", "m"),
            CallRecord("generator", 1000, 200, 200.0, "local", "m", cached=True),
        ]
    )
    assert (
        ledger.model_time()
        == "2 model calls (1 answered from the cache, 1,200 tokens), 2,400 tokens, 200 s of model time (about 3 min)"
    )


def test_replayed_calls_are_labelled_as_the_recordings_time():
    every = Ledger([CallRecord("generator", 100, 20, 90.0, "local", "m", replayed=True)] * 2)
    assert every.model_time() == (
        "2 model calls, 240 tokens, 180 s of model time (about 3 min, replayed: the recording's time)"
    )
    some = Ledger([*every.records, CallRecord("generator", 100, 20, 10.0, "local", "m")])
    assert some.model_time().endswith(
        "190 s of model time (about 3 min; 2 of the calls replayed, at the recording's time)"
    )
