"""Markdown and Jinja: each page rendered with what it declares (ids, links, text shingles), stored in the build cache."""
