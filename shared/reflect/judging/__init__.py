"""The judging layer: hidden-test verdicts, critics, critique parsing, sentinels, stop rules and
calibration. Everything that says whether a draft is good, and when to stop asking."""

from .calibration import (
    accepted_but_failing,
    agreement_rows,
    failure_census,
    lowest_threshold,
    mean_scores,
)
from .controller import Draft, StopRule, best_so_far, drafts_of
from .critics import (
    GENERIC_TEXT_CRITERIA,
    MEDICAL_CRITERIA,
    Evaluation,
    HybridCritic,
    LLMCritic,
    RuleCritic,
    TestGroundedCritic,
    VotingCritic,
    course_critics,
    critic_view,
    split_tests,
)
from .critique import Critique, ParseFailure, critique_schema, parse_critique
from .hidden import Attempt, judge, judge_the_judge, pass_rate
from .self_tests import run_self_tests, write_tests
from .sentinel import contains_sentinel, starts_with_sentinel, strict_sentinel

__all__ = [
    "accepted_but_failing",
    "agreement_rows",
    "failure_census",
    "lowest_threshold",
    "mean_scores",
    "GENERIC_TEXT_CRITERIA",
    "MEDICAL_CRITERIA",
    "contains_sentinel",
    "run_self_tests",
    "split_tests",
    "starts_with_sentinel",
    "strict_sentinel",
    "write_tests",
    "Attempt",
    "Critique",
    "Evaluation",
    "HybridCritic",
    "LLMCritic",
    "ParseFailure",
    "RuleCritic",
    "Draft",
    "StopRule",
    "TestGroundedCritic",
    "VotingCritic",
    "best_so_far",
    "course_critics",
    "critic_view",
    "critique_schema",
    "drafts_of",
    "judge",
    "judge_the_judge",
    "parse_critique",
    "pass_rate",
]
