"""Quantities written the way storage people write them.

Durations (``50us``, ``0.05ms``, ``1ms``, ``3s``, ``2min``) become seconds,
sizes (``512``, ``4k``, ``32KiB``, ``1m``) become bytes and link speeds
(``16Gbit``, ``10Gb/s``, ``1600MB/s``) become bytes per second.

Sizes follow fio's default ``kb_base=1024``: ``k``, ``K``, ``KB`` and ``KiB``
all mean 1024 bytes, so ``bs=32k`` means what fio means by it. Link speeds
follow the network convention: ``Gbit`` is 10^9 bits per second.

Every parser raises :class:`ValueError` with a sentence a user can act on; the
scenario loader adds the file and the place.
"""

from __future__ import annotations

import math
import re

__all__ = ["parse_duration", "parse_size", "parse_bandwidth", "format_duration", "format_size"]

# A sign is accepted so that "-5us" is refused by the caller's range check ("must be > 0").
_NUMBER = r"([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"

_DURATION_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "usec": 1e-6,
    "ms": 1e-3,
    "msec": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "min": 60.0,
    "h": 3600.0,
}

_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1024,
    "kb": 1024,
    "kib": 1024,
    "m": 1024**2,
    "mb": 1024**2,
    "mib": 1024**2,
    "g": 1024**3,
    "gb": 1024**3,
    "gib": 1024**3,
}

# bits per second for each spelling; bytes-per-second spellings are multiplied by 8.
_BANDWIDTH_UNITS = {
    "bit": 1.0,
    "kbit": 1e3,
    "mbit": 1e6,
    "gbit": 1e9,
    "tbit": 1e12,
    "kb/s": 1e3,
    "mb/s": 1e6,
    "gb/s": 1e9,
    "kbps": 1e3,
    "mbps": 1e6,
    "gbps": 1e9,
    "gfc": 1e9,  # "16GFC": nominal Fibre Channel speed
    "gbe": 1e9,  # "25GbE"
}
_BANDWIDTH_BYTE_UNITS = {"kb/s": 1e3, "mb/s": 1e6, "gb/s": 1e9, "kib/s": 1024.0, "mib/s": 1024.0**2, "gib/s": 1024.0**3}


def _split(text: str, what: str, example: str) -> tuple[float, str]:
    m = re.fullmatch(_NUMBER + r"\s*([A-Za-zµ/]*)", text.strip())
    if not m or not math.isfinite(float(m.group(1))):
        raise ValueError(f"{text!r} is not a {what} (write it like {example})")
    return float(m.group(1)), m.group(2)


def parse_duration(value: object) -> float:
    """``"50us"`` -> 5e-05 seconds. A bare number is refused: units are required."""
    if isinstance(value, bool) or not isinstance(value, str):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            raise ValueError(f"{value!r} has no unit (write it like \"{value}us\", \"{value}ms\" or \"{value}s\")")
        raise ValueError(f"expected a duration such as \"50us\" or \"1ms\", got {type(value).__name__}")
    number, unit = _split(value, "duration", '"50us", "1ms" or "10s"')
    if unit == "":
        raise ValueError(f"{value!r} has no unit (write it like \"{value}us\", \"{value}ms\" or \"{value}s\")")
    factor = _DURATION_UNITS.get(unit) or _DURATION_UNITS.get(unit.lower())
    if factor is None:
        raise ValueError(f"{value!r}: unknown time unit {unit!r} (use ns, us, ms, s, min or h)")
    return number * factor


def parse_size(value: object) -> int:
    """``"32k"`` -> 32768 bytes (fio's kb_base=1024). A bare integer is bytes."""
    if isinstance(value, bool):
        raise ValueError("expected a size such as \"4k\" or \"1m\", got a boolean")
    if isinstance(value, int):
        number, unit = float(value), ""
    elif isinstance(value, str):
        number, unit = _split(value, "size", '"4k", "32KiB" or "1m"')
    else:
        raise ValueError(f"expected a size such as \"4k\" or \"1m\", got {type(value).__name__}")
    factor = _SIZE_UNITS.get(unit.lower())
    if factor is None:
        raise ValueError(f"{value!r}: unknown size unit {unit!r} (use k, KiB, m, MiB, g or GiB)")
    size = number * factor
    if size != int(size):
        raise ValueError(f"{value!r} is not a whole number of bytes")
    return int(size)


def parse_bandwidth(value: object) -> float:
    """``"16Gbit"`` -> 2e9 bytes per second."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise ValueError(f"{value!r} has no unit (write it like \"{value}Gbit\" or \"{value}MB/s\")")
    if not isinstance(value, str):
        raise ValueError(f"expected a link speed such as \"16Gbit\" or \"1600MB/s\", got {value!r}")
    number, unit = _split(value, "link speed", '"16Gbit", "25GbE" or "1600MB/s"')
    if unit == "":
        raise ValueError(f"{value!r} has no unit (write it like \"{value}Gbit\" or \"{value}MB/s\")")
    if unit in ("MB/s", "GB/s", "KB/s") or unit.lower() in ("mib/s", "gib/s", "kib/s"):
        return number * _BANDWIDTH_BYTE_UNITS[unit.lower()]
    factor = _BANDWIDTH_UNITS.get(unit.lower())
    if factor is None:
        raise ValueError(
            f"{value!r}: unknown link speed unit {unit!r} (use Mbit, Gbit, Gb/s, GbE, GFC, MB/s or GB/s)"
        )
    return number * factor / 8.0


def format_duration(seconds: float) -> str:
    """Short human form: 2.2ms, 50us, 180s."""
    if seconds >= 1.0:
        return f"{seconds:g}s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:g}ms"
    return f"{seconds * 1e6:g}us"


def format_size(nbytes: int) -> str:
    for unit, factor in (("m", 1024**2), ("k", 1024)):
        if nbytes >= factor and nbytes % factor == 0:
            return f"{nbytes // factor}{unit}"
    return str(nbytes)
