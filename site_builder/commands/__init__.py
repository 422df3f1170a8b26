"""The commands beside building: `--new RECORD` (a draft guide) and `--merge-sitemap` (the registry)."""
