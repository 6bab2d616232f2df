"""Reading what the operating systems print: files in, lines with their numbers, located errors out."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import ScenarioError

__all__ = ["Source", "read_source", "toml_str", "runtime_key"]

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # multipath -ll in a terminal prints its map names bold


@dataclass(frozen=True)
class Source:
    """A file's text and name; :meth:`fail` is the one located error (``file: line N: problem``)."""

    name: str
    text: str

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    def fail(self, line: int | None, problem: str) -> ScenarioError:
        return ScenarioError(self.name, f"line {line}" if line else "", problem)


def read_source(path: str | Path) -> Source:
    """A captured output as text (UTF-8, or UTF-16 with a byte-order mark as PowerShell's ``>`` writes it)."""
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise ScenarioError(name, "", "no such file") from None
    except IsADirectoryError:
        raise ScenarioError(name, "", "is a directory, not a captured output") from None
    except OSError as e:
        raise ScenarioError(name, "", f"cannot read: {e.strerror or e}") from None
    encoding = "utf-16" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise ScenarioError(name, f"line {line}", f"not text (byte 0x{data[e.start]:02x})") from None
    if not text.strip():
        raise ScenarioError(name, "", "is empty")
    return Source(name, _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n")))


def toml_str(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text, ensure_ascii=False)


def runtime_key(name: str) -> tuple[int | str, ...]:
    """Sort key putting ``vmhba1:C0:T10:L1`` after ``vmhba1:C0:T9:L1`` (numbers compared as numbers)."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))
