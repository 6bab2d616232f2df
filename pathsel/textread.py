"""The one capped reader: every file a user hands pathsel (scenarios, captures, measurements, traces) is read here.

A file is read to at most :data:`pathsel.limits.MAX_FILE_BYTES` plus one byte
(``/dev/zero`` and a named pipe are files too: never read without an end),
decoded as UTF-8 (a byte order mark skipped) or UTF-16 with its byte order
mark (PowerShell's ``>`` writes that), and refused with one located problem if
it is missing, a folder, unreadable, too large, binary or empty. Each caller
turns :class:`TextReadError` into its own error type (ScenarioError,
MeasureError, ValueError), so messages keep their callers' shape.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from .limits import MAX_FILE_BYTES

__all__ = ["TextReadError", "read_capped", "decode_text"]


class TextReadError(ValueError):
    """Why a file could not be read as text: ``place`` ("" or ``line N``), ``problem``, and ``kind`` (missing,
    directory, unreadable, too-large, not-text, empty) with ``detail`` (the OS's reason, the size, the byte) for a
    caller that words its own message."""

    def __init__(self, place: str, problem: str, kind: str = "", detail: str = "") -> None:
        self.place = place
        self.problem = problem
        self.kind = kind
        self.detail = detail
        super().__init__(f"{place}: {problem}" if place else problem)


def decode_text(data: bytes, *, allow_empty: bool = False) -> str:
    """``data`` as text: UTF-16 when it starts with a UTF-16 byte order mark, else UTF-8 (its BOM dropped).

    A NUL byte is refused as well as undecodable bytes: UTF-8 allows it, but no text format pathsel reads does,
    and it is what a binary file or ``/dev/zero`` gives first.
    """
    encoding = "utf-16" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise TextReadError(f"line {line}", f"not text (byte 0x{data[e.start]:02x})", "not-text", f"byte 0x{data[e.start]:02x}") from None
    nul = text.find("\x00")
    if nul >= 0:
        raise TextReadError(
            f"line {text.count(chr(10), 0, nul) + 1}", "not text (a NUL byte: a binary file?)", "not-text", "a NUL byte: a binary file?"
        )
    if not allow_empty and not text.strip():
        raise TextReadError("", "is empty", "empty")
    return text


_CHUNK = 1 << 20


def _read_bounded(f: BinaryIO, most: int) -> bytes:
    """At most ``most`` bytes of ``f``, a chunk at a time; a first chunk that is plainly binary (a NUL byte, not
    UTF-16) ends the read there, so ``/dev/zero`` or a disk image is refused at once, not after 64 MB."""
    parts: list[bytes] = []
    size = 0
    while size < most:
        chunk = f.read(min(_CHUNK, most - size))
        if not chunk:
            break
        if not parts and b"\x00" in chunk and chunk[:2] not in (b"\xff\xfe", b"\xfe\xff"):
            return chunk  # decode_text names the NUL's line
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts)


def read_capped(path: str | Path, *, what: str = "text file", limit: int = MAX_FILE_BYTES, allow_empty: bool = False) -> str:
    """The text of ``path``, at most ``limit`` bytes; :class:`TextReadError` names what is wrong (``what``: the file's role)."""
    try:
        with Path(path).open("rb") as f:
            data = _read_bounded(f, limit + 1)
    except FileNotFoundError:
        raise TextReadError("", "no such file", "missing") from None
    except IsADirectoryError:
        raise TextReadError("", f"is a directory, not a {what}", "directory") from None
    except OSError as e:
        raise TextReadError("", f"cannot read: {e.strerror or e}", "unreadable", str(e.strerror or e)) from None
    if len(data) > limit:
        size = f"{limit >> 20} MB" if limit >= 1 << 20 else f"{limit:,} bytes"
        raise TextReadError("", f"is more than {size}, too large for a {what}: is it the file you meant?", "too-large", size)
    return decode_text(data, allow_empty=allow_empty)
