"""`python -m course_runtime.bench`: the course's strategies over a task set (`course_bench`), on the
course's model connection (`course_runtime.client`), which the package itself never imports."""

import sys

from course_bench import main

from .client import connect

if __name__ == "__main__":
    sys.exit(main(connect=connect))
