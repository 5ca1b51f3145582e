"""`python -m reflect.bench`: see reflect.bench."""

import sys

from . import main

sys.exit(main())
