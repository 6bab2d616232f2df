"""The version of pathsel: one place, read by the package, the CLI, reports and the build."""

__version__ = "0.1.0"
