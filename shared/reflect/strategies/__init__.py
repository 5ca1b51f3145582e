"""The strategies layer: one-shot (lesson 01), maker-checker (02), scored reflection (03), the LangGraph graph
(04, `reflect.strategies.graph`, imported on use), Reflexion (05) and resampling (06). Each file holds its loop
and the `Strategy` object that runs it and returns a `Run`; `base` holds the run frame they share."""

from .maker_checker import MAX_ITERATIONS, MakerChecker, keep_last, maker_checker
from .one_shot import OneShot, one_shot
from .reflexion import Reflexion
from .resample import Resample
from .revise import fresh, refine
from .scored import ScoredReflection, critique_step, generate_step, refine_step, scored_reflection

__all__ = [
    "Reflexion",
    "Resample",
    "fresh",
    "MAX_ITERATIONS",
    "MakerChecker",
    "OneShot",
    "ScoredReflection",
    "critique_step",
    "generate_step",
    "keep_last",
    "maker_checker",
    "one_shot",
    "refine",
    "refine_step",
    "scored_reflection",
]
