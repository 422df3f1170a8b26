"""Static site builder: guide pages from audit records and Markdown prose."""

__version__ = "0.1.0"
