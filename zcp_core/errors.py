"""Errors that carry enough context for a user to fix their input."""

from __future__ import annotations


class ZcpError(Exception):
    """Base class for errors that are shown to the user as a message, not a trace."""


class DataError(ZcpError):
    """Bad input data, located by file, line (1-based) and field."""

    def __init__(self, path: str, line: int | None, field: str | None, message: str):
        self.path = str(path)
        self.line = line
        self.field = field
        self.message = message
        where = self.path
        if line is not None:
            where += f", line {line}"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(f"{where}: {message}")


class ModelSpecError(ZcpError):
    """A model spec string that cannot be turned into a backend."""


class BackendUnavailable(ZcpError):
    """A backend or capability that is not present on this machine or server."""


class RunNotFound(ZcpError, FileNotFoundError):
    """A path that is not a run folder (no ``manifest.json``); still a ``FileNotFoundError`` for old callers."""
