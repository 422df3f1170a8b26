"""`python build.py --serve`: rebuild in memory on every change, serve the site from memory, reload open tabs."""
