"""Reading a text file a scenario names (delay samples, traces): through the one capped reader, one clear message per problem."""

from __future__ import annotations

from pathlib import Path

from ..textread import TextReadError, read_capped

__all__ = ["read_scenario_text"]


def read_scenario_text(name: str, path: Path, *, prefix: str, directory: str, too_large: str, binary_hint: str = "") -> str:
    """The text of ``path`` (``name`` as the scenario wrote it), or ValueError: missing, a directory, unreadable,
    over MAX_FILE_BYTES, not text, or empty. ``prefix`` starts every message; ``directory`` and ``too_large`` name
    what the file should have been; ``binary_hint`` follows "is not text"."""
    where = f" (looked for {path})" if str(path) != name else ""
    try:
        return read_capped(path, what=too_large)
    except TextReadError as e:  # worded here: these messages name the file inside the scenario's place
        if e.kind == "missing":
            raise ValueError(f"{prefix}no such file {name!r}{where}") from None
        if e.kind == "directory":
            raise ValueError(f"{prefix}{name!r} is a directory, not {directory}") from None
        if e.kind == "unreadable":
            raise ValueError(f"{prefix}cannot read {name!r}: {e.detail}") from None
        if e.kind == "too-large":
            raise ValueError(f"{prefix}{name!r} is more than {e.detail}, too large for {too_large}{where}") from None
        if e.kind == "not-text":
            raise ValueError(f"{prefix}{name!r} is not text ({e.place}, {e.detail}){binary_hint}") from None
        raise ValueError(f"{prefix}{name!r} {e.problem}") from None
