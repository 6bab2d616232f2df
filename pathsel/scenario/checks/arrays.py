"""The arrays' checks across sections: unique array and volume names, the replication pair and its preferred site, the
arrays each volume is on, and the controllers an owner names.
"""

from __future__ import annotations

from typing import Any

from .base import CrossCheck, guess

__all__ = ["check_arrays", "unknown_controller"]


def check_arrays(r: CrossCheck) -> None:
    """Array names, the replication pair and its preferred site, volume names and their arrays."""
    m, fail, arrays = r.m, r.fail, r.arrays
    r.unique(arrays, "arrays")
    if m.replication is not None:
        for j, a in enumerate(m.replication.arrays):
            if a not in arrays:
                fail(f"replication.arrays[{j}]", f"no array named {a!r} (arrays: {', '.join(arrays)})")
        if m.replication.arrays[0] == m.replication.arrays[1]:
            fail("replication.arrays", f"names {m.replication.arrays[0]!r} twice: the two arrays must differ")
    if m.replication is not None and m.replication.preferred_site is not None:
        if m.replication.preferred_site not in m.replication.arrays:
            fail("replication.preferred_site", f"{m.replication.preferred_site!r} is not in the replication pair ({', '.join(m.replication.arrays)})")
    volumes = [v.name for v in m.volumes]
    r.unique(volumes, "volumes")
    for i, v in enumerate(m.volumes):
        for j, a in enumerate(v.arrays or ()):
            if a not in arrays:
                fail(f"volumes[{i}].arrays[{j}]", f"no array named {a!r} (arrays: {', '.join(arrays)})")


def unknown_controller(place: str, name: str, arrays: list[Any]) -> list[tuple[str, str]]:
    """``name`` is not a controller of one of ``arrays``: a line each, with a guess at the misspelt name."""
    return [
        (place, f"no controller {name!r} on array {a.name!r} (controllers: {', '.join(a.controllers)}){guess(name, list(a.controllers))}")
        for a in arrays
        if name not in a.controllers
    ]
