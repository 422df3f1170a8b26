"""Static site builder for the GLM-5.2 deployment guides."""

__version__ = "0.1.0"
