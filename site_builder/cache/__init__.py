"""The build cache: a content-addressed store beside the project, the keys of what a build may reuse, and remembered drawings of guides."""
