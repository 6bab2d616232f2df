"""Reading what the operating systems print: files in, lines with their numbers, located errors out.

Every capture is read through :func:`pathsel.textread.read_capped` (a size cap: ``/dev/zero`` or a
binary file gets one located message, never a hang or a traceback). What the importers take from a
capture (names, numbers) is checked here the same way for every kind: numbers are ASCII digits
within a range (``str.isdigit`` accepts ``'²'``, which ``int`` refuses; ``\\d`` and ``int`` accept
Arabic-Indic digits, which no host prints), names are printable text without the ``{lun}`` braces,
and nothing a user typed reaches a TOML comment with a line break in it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ...errors import ScenarioError
from ...textread import TextReadError, read_capped

__all__ = ["Source", "read_source", "runtime_key", "ascii_int", "check_name", "MAX_LINE_CHARS", "safe_text"]

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # multipath -ll in a terminal prints its map names bold

# The longest line of a capture pathsel reads. The longest real ones (esxcli's Working Paths, a device
# config) are a few hundred characters; a line past this is a binary file or a paste gone wrong, and
# refusing it keeps every parser's work linear in the file's size.
MAX_LINE_CHARS = 16_384

# Characters that end a line for someone (str.splitlines, a terminal, an editor): none is in a host's
# output, so a capture holding one is refused where it is (comments: pathsel.scenario.systems.quoting.comment_text).
_BREAKS = re.compile("[\x00-\x08\x0b-\x1f\x7f\x85\u2028\u2029]")


@dataclass(frozen=True)
class Source:
    """A file's text and name; :meth:`fail` is the one located error (``file: line N: problem``)."""

    name: str
    text: str

    @property
    def lines(self) -> list[str]:
        # split on "\n" only: str.splitlines also splits on \v, \f, \x1c-\x1e, \x85, U+2028 and U+2029,
        # which would number lines differently from an editor (and from the error messages)
        lines = self.text.split("\n")
        return lines[:-1] if lines and lines[-1] == "" else lines

    def fail(self, line: int | None, problem: str) -> ScenarioError:
        return ScenarioError(self.name, f"line {line}" if line else "", problem)


def read_source(path: str | Path) -> Source:
    """A captured output as text (UTF-8, or UTF-16 with a byte-order mark as PowerShell's ``>`` writes it)."""
    name = str(path)
    try:
        text = read_capped(path, what="captured output")
    except TextReadError as e:
        raise ScenarioError(name, e.place, e.problem) from None
    src = Source(name, _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n")))
    for n, line in enumerate(src.lines, 1):
        if len(line) > MAX_LINE_CHARS:
            raise src.fail(n, f"{len(line):,} characters long: not a line of a captured output (at most {MAX_LINE_CHARS:,})")
        if bad := _BREAKS.search(line):
            raise src.fail(n, f"holds the control character U+{ord(bad.group()):04X}: not text a host prints")
    return src


def ascii_int(text: str, low: int = 0, high: int = 2**63 - 1) -> int | None:
    """``text`` as a whole number in ``low..high`` if it is ASCII digits only (no sign, no space), else None."""
    if not (text.isascii() and text.isdigit()) or len(text.lstrip("0")) > len(str(high)):
        return None
    value = int(text)
    return value if low <= value <= high else None


def safe_text(text: str) -> str:
    """``text`` encodable as UTF-8: a file name's undecodable bytes (surrogate escapes) written as ``\\xNN``."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate no file name decodes to
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def check_name(src: Source, line: int, what: str, name: str) -> str:
    """``name`` as read from ``src``, refused (located) if it could not be a name the host printed.

    Braces are refused because the scenario fills ``{lun}`` in path names: ``sd{lun}`` would load as
    another path's name.
    """
    if not name:
        raise src.fail(line, f"an empty {what}")
    if not name.isprintable() or "{" in name or "}" in name:
        raise src.fail(line, f"{what} {name[:60]!r} is not a name a host prints (a control or format character, or a brace)")
    return name


def runtime_key(name: str) -> tuple[tuple[int, str], ...]:
    """Sort key putting ``vmhba1:C0:T10:L1`` after ``vmhba1:C0:T9:L1`` (numbers compared as numbers, of any length)."""
    parts = re.split(r"([0-9]+)", name)
    return tuple((len(t.lstrip("0")), t.lstrip("0")) if i % 2 else (-1, t) for i, t in enumerate(parts))
