"""The values the command line's options take, checked as argparse reads them.

Each raises ``argparse.ArgumentTypeError`` with the problem in words, which the
parser prints as one ``pathsel: error: command line: argument ...`` line with
exit status 2. Shared by every command family (a command's own, such as
``pathsel top``'s ``--speed``, stays with its command).
"""

from __future__ import annotations

import argparse

from ..units import parse_seconds

__all__ = ["duration", "seed", "positive_float", "positive_int"]


def duration(text: str) -> float:
    """A bare number is seconds (fio's runtime=20); a unit works too (500ms, 2min)."""
    try:
        seconds = parse_seconds(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text!r}")
    return seconds


def seed(text: str) -> int:
    try:
        if not text.isascii():  # int() reads other scripts' digits ('\u0663' as 3): ASCII only, one message
            raise ValueError(text)
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be >= 0")
    return value


def positive_float(text: str) -> float:
    try:
        if not text.isascii():  # as seed: ASCII digits only
            raise ValueError(text)
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (value > 0 and value < float("inf")):
        raise argparse.ArgumentTypeError(f"must be > 0 and finite, got {text!r}")
    return value


def positive_int(text: str) -> int:
    try:
        if not text.isascii():  # as seed: ASCII digits only
            raise ValueError(text)
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be >= 1")
    return value
