"""Build the GLM-5.2 guide site: python build.py [--out DIR] [--audit]."""

import os
import sys
from pathlib import Path

from site_builder.cli import main

code = main(default_root=Path(__file__).resolve().parent)
# Leave without freeing each of the build's objects one by one, as mypy does: at 10,000 guides
# that took 4 s after the work was done. Every file and process the build used is closed.
try:
    sys.stdout.flush()
    sys.stderr.flush()
except OSError:  # a reader that went away (python build.py --audit | head)
    code = code or 120  # what Python itself exits with when it cannot flush
os._exit(code)
