"""Build the GLM-5.2 guide site: python build.py [--out DIR] [--audit]."""

import gc
import os
import sys
from pathlib import Path

# No garbage collection while the builder is imported: the collector walks the modules,
# classes and schemas being made again and again, a tenth of the start-up (about 40 ms of
# 0.38 s). Nothing imported is garbage; main sets the build's own thresholds.
gc.disable()
from site_builder.cli import main  # noqa: E402

gc.enable()

code = main(default_root=Path(__file__).resolve().parent)
# Leave without freeing each of the build's objects one by one, as mypy does: at 10,000 guides
# that took 4 s after the work was done. Every file and process the build used is closed.
try:
    sys.stdout.flush()
    sys.stderr.flush()
except OSError:  # a reader that went away (python build.py --audit | head)
    code = code or 120  # what Python itself exits with when it cannot flush
os._exit(code)
