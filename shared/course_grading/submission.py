"""One learner's lesson autograded, then given nbgrader's HTML feedback, in one process (nbgrader's own API, each
of its commands costs about 2 s of CPU to start): run in the learner's course directory by `grade_learner`,

    python -m course_grading.submission LESSON LEARNER

It exits 1, its last line saying why, when autograde fails; feedback is written only for a graded submission.
"""

from __future__ import annotations

import sys

from nbgrader.apps import NbGraderAPI
from traitlets.config.loader import PyFileConfigLoader


def main(lesson: str, learner: str) -> int:
    api = NbGraderAPI(config=PyFileConfigLoader("nbgrader_config.py", path=".").load_config())
    graded = api.autograde(lesson, learner, force=True)
    if not graded["success"]:
        print(graded.get("log", ""), graded.get("error", ""), sep="\n")
        return 1
    api.generate_feedback(lesson, learner, force=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
