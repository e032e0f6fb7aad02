"""The package version (its own module so the CLI reads it without importing anything)."""

__version__ = "0.1.0"
