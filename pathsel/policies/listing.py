"""``pathsel policies``: the built-in policies with their parameters, defaults and ranges, without loading numba.

The policy files define compiled hooks, so importing them loads numba and llvmlite (0.4-1.5 s). The listing
they give is kept in ``pathsel/data/policies.txt`` beside the hash of the sources it was made from: ``pathsel
policies`` prints the file while those sources still hash the same, and builds the listing from the registry
otherwise, so a stale file is never printed, only slower. After changing a policy's parameters or summary,
``python -m pathsel.policies.listing --write`` writes it again (tests/test_startup.py fails until then).
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

__all__ = ["text", "build", "sources_hash", "LISTING"]

_PACKAGE = Path(__file__).resolve().parents[1]
LISTING = _PACKAGE / "data" / "policies.txt"
_HEAD = "# pathsel policies, made from sources hashing "


def _sources() -> list[Path]:
    """What the listing is made from: every policy file (this one too) and the limits their ranges quote."""
    return sorted((_PACKAGE / "policies").rglob("*.py")) + [_PACKAGE / "limits.py"]


def sources_hash() -> str:
    h = hashlib.sha256()
    for f in _sources():
        h.update(f.relative_to(_PACKAGE).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def build() -> str:
    """The listing, from the registry (imports every policy file, and numba)."""
    from .registry import POLICY_DEFS

    width = max(len(d.name) for d in POLICY_DEFS.values())
    out = []
    for d in POLICY_DEFS.values():
        out.append(f"{d.name:{width}s}  {d.summary}")
        for p in d.params:
            rng = (
                f" [{_num(p.low)}..{_num(p.high)}]"
                if p.low is not None and p.high is not None
                else (f" [{'|'.join(p.choices)}]" if p.choices else "")
            )
            out.append(f"{'':{width + 2}s}{p.name}={p.default}{rng}  {p.doc}")
    return "".join(line + "\n" for line in out)


def text() -> str:
    """The listing: the shipped file when it was made from these sources, else built now."""
    try:
        head, _, body = LISTING.read_text(encoding="utf-8").partition("\n")
    except OSError:
        return build()
    return body if head == _HEAD + sources_hash() else build()


def write() -> Path:
    LISTING.write_text(_HEAD + sources_hash() + "\n" + build(), encoding="utf-8")
    return LISTING


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m pathsel.policies.listing --write")
    print(f"wrote {write()}")
