"""User text into emitted commands and configuration: quoted for the reader that runs it, or refused.

What ``--emit`` writes is pasted into root shells, udev and multipath.conf, so
every name a user gives (a device, a vendor, a model, a SATP, a path, a
label, a file name) goes through one of these, and a value that cannot be
written safely is refused with one located :class:`~pathsel.errors.ScenarioError`
(``command line: --device: ...``), never written.

* POSIX shells (esxcli, SATP rules): :func:`sh_quote`, Python's
  ``shlex.quote`` (single quotes; ``'`` written as ``'"'"'``), as IEEE Std
  1003.1-2017, Shell Command Language, 2.2.2 "Single-Quotes" (The Open Group,
  2018), https://pubs.opengroup.org/onlinepubs/9699919799/utilities/V3_chap02.html
  reads it: nothing inside single quotes is special.
* PowerShell: :func:`ps_quote` and :func:`ps_split`, after Microsoft,
  "about_Quoting_Rules" (PowerShell 7.4, 2024),
  https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_quoting_rules
  (in a single-quoted string only the single quote is special, written
  twice) and the PowerShell Language Specification 3.0, 2.3.5.2 "String
  literals" (Microsoft, 2012), where the single-quote characters are ``'``
  and U+2018, U+2019, U+201A, U+201B.
* udev rules: :func:`udev_value`, after udev(7) (systemd 256, 2024),
  https://www.freedesktop.org/software/systemd/man/latest/udev.html: a value
  is double-quoted, ``\\"`` inside it is an escaped quote only in newer
  systemd and a line ending in ``\\`` continues, so neither ``"`` nor ``\\``
  is written; match values are shell glob patterns (``*``, ``?``,
  ``[...]``) with ``|`` separating alternatives; ``$`` and ``%`` start
  substitutions in many keys.
* multipath.conf: :func:`mpconf_value`, after multipath-tools,
  ``libmpathutil/parser.c`` (``alloc_strvec``, ``read_line``; MAXBUF in
  ``parser.h``), 0.9.x, https://github.com/opensvc/multipath-tools: words
  end at white space, ``{``, ``}``, ``!`` and ``#``; a ``"``-quoted string
  keeps all of those; ``""`` inside one is a quote only in newer versions;
  a line is read with ``fgets`` into 1024 bytes, so a longer line is cut and
  its rest read as a line of its own; ``\\r`` and ``\\n`` end a line.
* Comments: :func:`comment_text`: one line whatever the text holds.

Every format here is read line by line, and the readers differ on what ends
a line (bash only ``\\n``; udev and multipath-tools also ``\\r``;
PowerShell ``\\r`` and ``\\n``; Python's ``str.splitlines``, which
:func:`~pathsel.scenario.systems.read_emitted` uses, also ``\\v``, ``\\f``, ``\\x1c``
to ``\\x1e``, U+0085, U+2028, U+2029). So no value may hold a control
character (Unicode category Cc, NUL included: no argv or C string can carry
it), a line or paragraph separator (Zl, Zp), a bidirectional override or
isolate, or a lone surrogate (what Python makes of bytes that are not UTF-8,
which no output can encode): a device name never does, and one command per
line, shown as it runs, is what a reader of the script (a person or a tool)
expects.
"""

from __future__ import annotations

import re
import shlex
import unicodedata

from ...errors import ScenarioError

__all__ = [
    "NAME_LIMIT",
    "shown",
    "check_name",
    "sh_quote",
    "sh_word",
    "ps_quote",
    "ps_split",
    "udev_value",
    "mpconf_value",
    "comment_text",
]

NAME_LIMIT = 256  # characters: longer than any device ID, NQN (223 bytes) or SCSI vendor/product; keeps lines short
_COMMENT_BYTES = 900  # and the words around it: a comment line stays under multipath-tools' 1024-byte line (MAXBUF)
_MPCONF_LINE_BYTES = 1000  # multipath-tools reads a line into 1024 bytes (MAXBUF); the keyword and indent take the rest
PS_QUOTES = "'\u2018\u2019\u201a\u201b"  # PowerShell's single-quote characters (Language Specification 3.0, 2.3.5.2)


def shown(value: str, limit: int = 40) -> str:
    """``value`` for a one-line message: repr (escapes every line break), cut to ``limit`` characters."""
    return repr(value[:limit]) + ("..." if len(value) > limit else "")


# Explicit bidirectional embeddings, overrides and isolates (Unicode Standard Annex #9): a terminal showing the
# emitted line reorders the text after one ("Trojan Source", Boucher and Anderson, 2021), so the command a person
# reads before pasting it is not the one that runs. No device name holds them.
_BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def _unwritable(ch: str) -> str | None:
    cat = unicodedata.category(ch)
    if ch == "\0":
        return "a NUL character"
    if cat == "Cs":
        return "bytes that are not UTF-8"
    if ch in "\n\r" or cat in ("Zl", "Zp") or ch in "\v\f\x1c\x1d\x1e\x85":
        return f"a line break ({ch!r})"
    if cat == "Cc":
        return f"a control character ({ch!r})"
    if ch in _BIDI:
        return f"a bidirectional control ({ch!r}), which changes how the line is shown"
    return None


def check_name(value: str, what: str) -> str:
    """``value`` if every reader of emitted text can take it as one value; else a located refusal.

    ``what`` is the option it came from (``--device``), the place of the error.
    """
    if not value.strip():
        raise ScenarioError("command line", what, "is empty")
    if len(value) > NAME_LIMIT:
        raise ScenarioError("command line", what, f"is {len(value)} characters long: pathsel writes names of at most {NAME_LIMIT}")
    for i, ch in enumerate(value):
        why = _unwritable(ch)
        if why:
            raise ScenarioError(
                "command line",
                what,
                f"{shown(value)} holds {why} at character {i + 1}: pathsel does not write it into a command or a configuration file",
            )
    return value


def sh_quote(value: str, what: str) -> str:
    """``value`` as one word of a POSIX shell line (``shlex.quote``), checked by :func:`check_name`."""
    return shlex.quote(check_name(value, what))


def sh_word(value: str, what: str) -> str:
    """As :func:`sh_quote`, for a value written as the word after a short option (``-V VALUE``).

    A value starting with ``-`` is refused: the command's own option parser
    could read it as an option (``-V --psp=...``) whatever the quoting.
    """
    if value.startswith("-"):
        raise ScenarioError("command line", what, f"{shown(value)} starts with '-': esxcli would read it as an option")
    return sh_quote(value, what)


def ps_quote(value: str, what: str) -> str:
    """``value`` as a PowerShell single-quoted string: each of its single-quote characters written twice.

    Non-ASCII text is refused: Windows PowerShell 5.1 reads a script without
    a byte-order mark in the ANSI code page, where the bytes of a UTF-8
    character can decode as U+2018 or U+2019, which end a single-quoted string.
    """
    check_name(value, what)
    if not value.isascii():
        raise ScenarioError("command line", what, f"{shown(value)} is not ASCII: Windows PowerShell 5.1 could read its bytes as quotes")
    return "'" + "".join(ch * 2 if ch in PS_QUOTES else ch for ch in value) + "'"


_PS_BARE = re.compile(r"[A-Za-z0-9._:/=+-]+")


def ps_split(line: str) -> list[str]:
    """A PowerShell command line as pathsel writes it: bare words and single-quoted strings, then maybe a ``#`` comment.

    Raises ValueError for anything else (double quotes, ``$``, ``;``,
    backticks, parentheses...): the lines pathsel writes hold none, so a line
    that does is not one of them.
    """
    words: list[str] = []
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if ch in " \t":
            i += 1
            continue
        if ch == "#":
            break
        if ch in PS_QUOTES:
            out, i = [], i + 1
            while True:
                if i >= n:
                    raise ValueError("no closing quotation")
                if line[i] in PS_QUOTES:
                    if i + 1 < n and line[i + 1] in PS_QUOTES:  # a doubled quote is one quote character
                        out.append(line[i])
                        i += 2
                        continue
                    i += 1
                    break
                out.append(line[i])
                i += 1
            if i < n and line[i] not in " \t#":
                raise ValueError(f"{line[i]!r} right after a quoted string")
            words.append("".join(out))
            continue
        m = _PS_BARE.match(line, i)
        if not m:
            raise ValueError(f"{ch!r} is not in a word pathsel writes")
        words.append(m.group())
        i = m.end()
        if i < n and line[i] not in " \t#":
            raise ValueError(f"{line[i]!r} is not in a word pathsel writes")
    return words


_UDEV_SPECIAL = {
    '"': "ends the quoted value",
    "\\": "is an escape (and ends a continued line) to udev",
    "$": "starts a substitution",
    "%": "starts a substitution",
    "*": "is a glob pattern character in a match",
    "?": "is a glob pattern character in a match",
    "[": "is a glob pattern character in a match",
    "]": "is a glob pattern character in a match",
    "|": "separates alternatives in a match",
}


def udev_value(value: str, what: str) -> str:
    """``value`` inside a udev rule's double quotes, matched literally; refused if udev would read it otherwise."""
    check_name(value, what)
    for ch in value:
        if ch in _UDEV_SPECIAL:
            raise ScenarioError("command line", what, f"{shown(value)} holds {ch!r}, which {_UDEV_SPECIAL[ch]} in a udev rule: give the exact name")
    return '"' + value + '"'


_MP_WORD = re.compile(r"[A-Za-z0-9._:-]+")


def mpconf_value(value: str, what: str, *, quote: bool = True) -> str:
    """``value`` as a multipath.conf value: a bare word when it is one (and ``quote`` is off), else ``"quoted"``.

    A ``"`` is refused (only newer multipath-tools read ``""`` as a quote), as
    is a value whose line would not fit in the 1024 bytes multipath-tools
    reads a line into (the rest would be read as a line of its own).
    """
    check_name(value, what)
    if '"' in value:
        raise ScenarioError("command line", what, f"{shown(value)} holds '\"', which ends a quoted value in multipath.conf")
    if len(value.encode("utf-8")) > _MPCONF_LINE_BYTES - 24:
        raise ScenarioError("command line", what, "is too long for a multipath.conf line (multipath-tools reads 1024 bytes a line)")
    if not quote and _MP_WORD.fullmatch(value):
        return value
    return '"' + value + '"'


def comment_text(text: str, limit: int = _COMMENT_BYTES) -> str:
    """``text`` for a ``#`` comment: every control character and line separator escaped, cut to ``limit`` UTF-8 bytes.

    Escaped rather than refused: a comment only tells, so a label or a file
    name with a newline in it is shown (``\\n``), not written as a line break.
    """
    out: list[str] = []
    size = 0
    for ch in text:
        part = ch.encode("unicode_escape").decode("ascii") if _unwritable(ch) else ch
        size += len(part.encode("utf-8", "surrogatepass"))
        if size > limit:
            return "".join(out) + "..."
        out.append(part)
    return "".join(out)
