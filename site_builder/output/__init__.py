"""What a build leaves behind: the search index in shards, the atomic write, and the memory of what the last build was made from."""
