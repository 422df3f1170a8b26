"""The views of every page, built before Jinja runs: blocks, cells, charts, navigation, structured data and the id allocator."""
