from reflect.judging.calibration import agreement, base_rate, replay_rule, sweep, uninformative_band
from reflect.judging.controller import Draft, StopRule
from reflect.records import Stop


def hist(*items):
    """items: (score, passed, tokens)"""
    return [Draft(i + 1, f"code {i}", s, "", t, passed=p) for i, (s, p, t) in enumerate(items)]


def test_agreement_counts_each_kind():
    a = agreement([(9, True), (9, False), (3, False), (3, True), (None, True)], threshold=8)
    assert (a.true_accepts, a.false_accepts, a.true_rejects, a.false_rejects, a.unscored) == (
        1,
        1,
        1,
        1,
        1,
    )
    assert a.rate == 0.5
    assert agreement([], 5).rate == 0.0


def test_replay_rule_cuts_where_the_rule_stops():
    h = hist((6, False, 100), (8, True, 120), (9, True, 130))
    cut, reason = replay_rule(h, StopRule(threshold=8, max_iterations=3))
    assert len(cut) == 2 and reason is Stop.ACCEPTED
    cut, reason = replay_rule(h, StopRule(threshold=10, max_iterations=5))
    assert len(cut) == 3 and reason is None


def test_sweep_trades_iterations_for_pass_rate():
    histories = [
        hist((6, False, 100), (8, True, 100), (9, True, 100)),
        hist((9, True, 50)),
        hist((5, False, 80), (7, False, 80), (7, False, 80)),
    ]
    rows = {r["threshold"]: r for r in sweep(histories, [6, 8, 9], max_iterations=3)}
    assert rows[6]["avg_iterations"] == (1 + 1 + 2) / 3
    assert rows[9]["avg_iterations"] == (3 + 1 + 3) / 3
    assert rows[6]["pass_rate"] == 1 / 3 and rows[8]["pass_rate"] == 2 / 3
    assert rows[9]["avg_tokens"] == (300 + 50 + 240) / 3


def test_uninformative_band():
    pairs = [(9, True), (9, True), (7, True), (7, False), (3, False), (None, True)]
    assert base_rate(pairs) == 3 / 5  # the unscored draft does not count
    assert uninformative_band(pairs) == [7]  # 50% passing at 7, beside a base rate of 60%


def test_uninformative_band_is_measured_from_the_base_rate():
    # 72% of all drafts pass: a score at which 72% pass says nothing, a score at which 50% pass says "worse"
    one_score = [(10, True)] * 13 + [(10, False)] * 5
    assert uninformative_band(one_score) == [10]  # a fixed 30%-70% band misses it
    mostly_pass = [(10, True)] * 17 + [(10, False)] * 1 + [(6, True), (6, False)]
    assert base_rate(mostly_pass) == 0.9
    assert uninformative_band(mostly_pass) == [
        10
    ]  # 50% at 6 is 40 points below the base rate: informative
    assert uninformative_band(mostly_pass, base=0.5) == [6]  # the old band is the base rate 50%
    assert uninformative_band(mostly_pass, margin=0.4) == [6, 10]  # the edge counts
    assert uninformative_band([]) == [] and base_rate([(None, True)]) == 0.0


def test_threshold_explorer_prints_its_static_view_first(capsys):
    from reflect.notebook.widgets import threshold_explorer, threshold_summary

    histories = [hist((6, False, 100), (8, True, 100), (9, True, 100))]
    threshold_explorer(histories)
    assert capsys.readouterr().out.splitlines() == [
        threshold_summary(histories, 8, n) for n in (1, 2, 3)
    ]


def test_threshold_explorer_redraws_from_recorded_histories():
    from reflect.notebook.widgets import threshold_explorer, threshold_summary

    histories = [hist((6, False, 100), (8, True, 100), (9, True, 100))]
    assert threshold_summary(histories, 6, 3).endswith(
        "1.00 iterations on average, final pass rate 0%, 100 tokens per task"
    )
    box = threshold_explorer(histories)
    assert (
        box._repr_mimebundle_()["text/plain"]
        == "[interactive: sliders for the threshold and the iteration budget; run the cell to use it]"
    )
    thr, its, out = box.children
    thr.value = 8
    assert "2.00 iterations" in out.value and "100%" in out.value
    its.value = 1
    assert "1.00 iterations" in out.value


def test_sweep_counts_the_best_draft_not_the_last():
    regressed = hist(
        (8, True, 100), (5, False, 100)
    )  # a drop of over 20% stops the loop and reverts to the best
    assert sweep([regressed], [9], max_iterations=3)[0]["pass_rate"] == 1.0
