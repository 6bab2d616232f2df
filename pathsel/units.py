"""Quantities written the way storage people write them.

Durations (``50us``, ``0.05ms``, ``1ms``, ``3s``, ``10m``, ``2min``, ``1h``) become seconds, with fio's
time suffixes (``m`` is minutes, ``ms`` milliseconds, ``d`` days),
sizes (``512``, ``4k``, ``32KiB``, ``1m``) become bytes and link speeds
(``16Gbit``, ``32Gb``, ``25GbE``, ``10G``, ``1600MB/s``) become bytes per second.

Sizes follow fio's default ``kb_base=1024``: ``k``, ``K``, ``KB`` and ``KiB``
all mean 1024 bytes, so ``bs=32k`` means what fio means by it. Link speeds
follow the network convention: ``Gbit`` is 10^9 bits per second, ``b`` is a
bit and ``B`` a byte, and a bare prefix (``10G``) counts bits, as "10G
Ethernet" does.

Every parser raises :class:`ValueError` with a sentence a user can act on; the
scenario loader adds the file and the place.
"""

from __future__ import annotations

import math
import re

__all__ = [
    "parse_duration",
    "parse_seconds",
    "parse_size",
    "parse_bandwidth",
    "format_duration",
    "format_size",
    "MAX_DURATION",
    "MIN_DURATION",
]

# A sign is accepted so that "-5us" is refused by the caller's range check ("must be > 0");
# inf and nan are read so that they can be refused by name.
_NUMBER = r"([-+]?(?:[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN]))"

# The longest duration taken anywhere. The engines' clock is float64 seconds (and the
# kernel's integer nanoseconds); float64 resolves a nanosecond only up to about 4e6 s.
MAX_DURATION = 1e6
# The shortest positive duration: the fast engine's clock counts whole nanoseconds, so less would be 0.
MIN_DURATION = 1e-9

_DURATION_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "usec": 1e-6,
    "ms": 1e-3,
    "msec": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    # fio's time suffixes (HOWTO, "Parameter types": time): m is minutes, as in runtime=10m; ms stays milliseconds.
    "m": 60.0,
    "min": 60.0,
    "h": 3600.0,
    "hour": 3600.0,
    "d": 86400.0,
    "day": 86400.0,
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

# Link speeds: PREFIX [i] BASE [RATE]. Decimal prefixes (lower case m, g, t too: nobody means
# millibits); "i" makes them binary (MiB/s).
_RATE_PREFIXES = {"": 1.0, "k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6, "g": 1e9, "G": 1e9, "t": 1e12, "T": 1e12}
_RATE_SUFFIXES = ("/s", "/sec", "ps")
_RATE_FORMS = "bits: Gbit, Gb, Gbps, Gbit/s, GbE or a bare G; bytes: GB/s, GBps or GiB/s; 32GFC: Fibre Channel's speed"


def _split(text: str, what: str, example: str) -> tuple[float, str]:
    m = re.fullmatch(_NUMBER + r"\s*([A-Za-zµ/]*)", text.strip())
    if not m:
        raise ValueError(f"{text!r} is not a {what} (write it like {example})")
    number = float(m.group(1))
    if not math.isfinite(number):
        raise ValueError(f"{text!r}: must be finite")
    return number, m.group(2)


def _at_most_max(seconds: float, shown: object) -> float:
    if seconds > MAX_DURATION:
        raise ValueError(
            f"{shown!r} is more than the 1e6s (11.6 days) pathsel allows: "
            "its clock counts seconds in float64, which resolves 1 ns only up to about 4e6 s"
        )
    return seconds


def _at_least_a_nanosecond(seconds: float, shown: object) -> float:
    if 0 < seconds < MIN_DURATION * (1 - 1e-9):
        raise ValueError(f"{shown!r} is shorter than 1ns, the resolution of pathsel's clock")
    return seconds


def parse_duration(value: object) -> float:
    """``"50us"`` -> 5e-05 seconds. A bare number is refused: units are required."""
    if isinstance(value, bool) or not isinstance(value, str):
        if isinstance(value, float) and not math.isfinite(value):  # TOML's bare nan and inf: no unit mends those
            raise ValueError(f'{value!r}: must be a finite duration such as "50us"')
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            raise ValueError(f'{value!r} has no unit (write it like "{value}us", "{value}ms" or "{value}s")')
        raise ValueError(f'expected a duration such as "50us" or "1ms", got {type(value).__name__}')
    number, unit = _split(value, "duration", '"50us", "1ms" or "10s"')
    if unit == "":
        raise ValueError(f'{value!r} has no unit (write it like "{value}us", "{value}ms" or "{value}s")')
    factor = _DURATION_UNITS.get(unit) or _DURATION_UNITS.get(unit.lower())
    if factor is None:
        raise ValueError(f"{value!r}: unknown time unit {unit!r} (use ns, us, ms, s, m or min, h or d, as fio does)")
    return _at_least_a_nanosecond(_at_most_max(number * factor, value), value)


def parse_seconds(value: object) -> float:
    """A duration where a bare number means seconds: the command line's ``--duration 20`` and
    ``pathsel.simulate(duration=20)``, as fio's ``runtime=20``. ``"500ms"`` and ``"2min"`` work too.

    Refuses inf, nan and more than :data:`MAX_DURATION`; the caller checks the sign.
    """
    if isinstance(value, bool):
        raise ValueError(f'expected a duration such as 20 (seconds) or "500ms", got {value!r}')
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str) and re.fullmatch(_NUMBER, value.strip()):
        number = float(value.strip())
    elif isinstance(value, str):
        return parse_duration(value)
    else:
        raise ValueError(f'expected a duration such as 20 (seconds) or "500ms", got {type(value).__name__}')
    if not math.isfinite(number):
        raise ValueError(f"must be finite, got {value!r}")
    return _at_least_a_nanosecond(_at_most_max(number, value), value)


def parse_size(value: object) -> int:
    """``"32k"`` -> 32768 bytes (fio's kb_base=1024). A bare integer is bytes."""
    if isinstance(value, bool):
        raise ValueError('expected a size such as "4k" or "1m", got a boolean')
    if isinstance(value, int):
        number, unit = float(value), ""
    elif isinstance(value, str):
        number, unit = _split(value, "size", '"4k", "32KiB" or "1m"')
    else:
        raise ValueError(f'expected a size such as "4k" or "1m", got {type(value).__name__}')
    factor = _SIZE_UNITS.get(unit.lower())
    if factor is None:
        raise ValueError(f"{value!r}: unknown size unit {unit!r} (use k, KiB, m, MiB, g or GiB)")
    size = number * factor
    if not math.isfinite(size):
        raise ValueError(f"{value!r} is too large a size (it overflows once converted to bytes)")
    if size != int(size):
        raise ValueError(f"{value!r} is not a whole number of bytes")
    return int(size)


def _rate_unit(unit: str) -> float | None:
    """Bytes per second in one ``unit`` (``Gbit``, ``GB/s``, ``25GbE``'s ``GbE``), or None if it is not one."""
    body, rate = unit, False
    for suffix in _RATE_SUFFIXES:
        if unit.endswith(suffix) and len(unit) > len(suffix):
            body, rate = unit[: -len(suffix)], True
            break
    low = body.lower()
    for word, per_unit in (("bits", 1 / 8), ("bit", 1 / 8), ("bytes", 1.0), ("byte", 1.0)):
        if low.endswith(word):  # spelt out, any case is clear: GBit, Gbyte
            prefix = body[: -len(word)]
            break
    else:
        if body.endswith("b"):
            prefix, per_unit = body[:-1], 1 / 8
        elif body.endswith("B"):
            prefix, per_unit = body[:-1], 1.0
        elif low.endswith("be") and not rate and len(body) > 2:
            prefix, per_unit = body[:-2], 1 / 8  # GbE: the MAC's rate, in bits (64b/66b runs the line faster)
        elif not rate:
            prefix, per_unit = body, 1 / 8  # "10G": bits, as in 10G Ethernet
            if not prefix:
                return None
        else:
            return None
    if per_unit == 1.0 and not rate:
        return None  # "32GB": an amount of data (parse_bandwidth says so)
    binary = prefix.endswith(("i", "I")) and len(prefix) == 2
    factor = _RATE_PREFIXES.get(prefix[0] if binary else prefix)
    if factor is None:
        return None
    if binary:
        factor = 1024.0 ** {1e3: 1, 1e6: 2, 1e9: 3, 1e12: 4}[factor]
    return factor * per_unit


# Fibre Channel's speeds (FCIA speed map; T11 FC-PI-5/6/7): GFC -> (baud per lane, lanes, data bits per line bit).
# 64GFC: 28.9 GBd PAM4 (57.8 Gb/s), 256b/257b transcoding and RS(544,514) FEC; 128GFC: four 32GFC lanes.
FC_SPEEDS: dict[int, tuple[float, int, float]] = {
    1: (1.0625e9, 1, 8 / 10),
    2: (2.125e9, 1, 8 / 10),
    4: (4.25e9, 1, 8 / 10),
    8: (8.5e9, 1, 8 / 10),
    16: (14.025e9, 1, 64 / 66),
    32: (28.05e9, 1, 64 / 66),
    64: (57.8e9, 1, (256 / 257) * (514 / 544)),
    128: (28.05e9, 4, 64 / 66),
}


def fc_line_rate(gfc: int) -> float:
    """Bytes per second a ``gfc``GFC link carries after its line encoding (frames, headers and all)."""
    baud, lanes, code = FC_SPEEDS[gfc]
    return baud * lanes * code / 8


def _fc_rate(value: str, number: float, unit: str) -> float:
    """``"32GFC"``: the speed's data rate after encoding (3,400 MB/s), not 32 Gbit/s."""
    speeds = ", ".join(f"{g}GFC" for g in FC_SPEEDS)
    if unit.lower() != "gfc" or number not in FC_SPEEDS:
        raise ValueError(f"{value!r}: not a Fibre Channel speed ({speeds}); for another rate write Gbit or MB/s")
    return fc_line_rate(int(number))


def parse_bandwidth(value: object) -> float:
    """``"16Gbit"`` -> 2e9 bytes per second. ``b`` is a bit, ``B`` a byte; a bare ``G`` counts bits."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f'{value!r}: must be a finite link speed such as "16Gbit"')
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise ValueError(f'{value!r} has no unit (write it like "{value}Gbit" or "{value}MB/s")')
    if not isinstance(value, str):
        raise ValueError(f'expected a link speed such as "16Gbit" or "1600MB/s", got {value!r}')
    number, unit = _split(value, "link speed", '"16Gbit", "25GbE" or "1600MB/s"')
    if unit == "":
        raise ValueError(f'{value!r} has no unit (write it like "{value}Gbit" or "{value}MB/s")')
    if unit.lower().endswith("fc"):
        return _fc_rate(value, number, unit)
    factor = _rate_unit(unit)
    if factor is None:
        if _rate_unit(unit + "/s") is not None:
            # bytes without /s are an amount of data, and often a typo for bits (8 times less)
            bits = f', or "{value.strip()[:-1]}b" for bits per second' if unit.endswith("B") else ""
            raise ValueError(f'{value!r} is an amount of data, not a rate: write "{value.strip()}/s" for bytes per second{bits}')
        raise ValueError(f"{value!r}: unknown link speed unit {unit!r} ({_RATE_FORMS})")
    rate = number * factor
    if not math.isfinite(rate):
        raise ValueError(f"{value!r} is too large a link speed (it overflows once converted to bytes per second)")
    return rate


def format_duration(seconds: float) -> str:
    """Short human form: 2.2ms, 50us, 180s, 5ns."""
    if seconds >= 1.0:
        return f"{seconds:g}s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:g}ms"
    if seconds >= 1e-6 or seconds == 0:
        return f"{seconds * 1e6:g}us"
    return f"{seconds * 1e9:g}ns"


def format_size(nbytes: int) -> str:
    for unit, factor in (("m", 1024**2), ("k", 1024)):
        if nbytes >= factor and nbytes % factor == 0:
            return f"{nbytes // factor}{unit}"
    return str(nbytes)
