"""Reading a text file a scenario names (delay samples, traces): bounded, BOM-aware, one clear message per problem."""

from __future__ import annotations

from pathlib import Path

from ..limits import MAX_FILE_BYTES

__all__ = ["read_scenario_text"]


def read_scenario_text(name: str, path: Path, *, prefix: str, directory: str, too_large: str, binary_hint: str = "") -> str:
    """The text of ``path`` (``name`` as the scenario wrote it), or ValueError: missing, a directory, unreadable,
    over MAX_FILE_BYTES, not text, or empty. ``prefix`` starts every message; ``directory`` and ``too_large`` name
    what the file should have been; ``binary_hint`` follows "is not text"."""
    where = f" (looked for {path})" if str(path) != name else ""
    try:
        with path.open("rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)  # /dev/zero is a file too: never read without an end
    except FileNotFoundError:
        raise ValueError(f"{prefix}no such file {name!r}{where}") from None
    except IsADirectoryError:
        raise ValueError(f"{prefix}{name!r} is a directory, not {directory}") from None
    except OSError as e:
        raise ValueError(f"{prefix}cannot read {name!r}: {e.strerror or e}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"{prefix}{name!r} is more than {MAX_FILE_BYTES >> 20} MB, too large for {too_large}{where}")
    # PowerShell's '>' writes UTF-16 with a BOM: latte and Windows ping captures often arrive so.
    encoding = "utf-16" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise ValueError(f"{prefix}{name!r} is not text (line {line}, byte 0x{data[e.start]:02x}){binary_hint}") from None
    if not text.strip():
        raise ValueError(f"{prefix}{name!r} is empty")
    return text
