"""Build the GLM-5.2 guide site: python build.py [--out DIR] [--audit]."""

from pathlib import Path

from site_builder.cli import main

raise SystemExit(main(default_root=Path(__file__).resolve().parent))
