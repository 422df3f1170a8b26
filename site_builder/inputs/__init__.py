"""Read and validate the inputs: decode files, list folders, keep unchanged records and front matter, normalise and assemble the site."""
