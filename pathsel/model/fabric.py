"""The fabric's arithmetic (issue 33): FC buffer-to-buffer credits as a rate, and the switches a route crosses.

A sender may have at most ``bb_credits`` frames unacknowledged on a link: each
frame takes a credit, and the receiver returns it (R_RDY) when it has freed the
frame's buffer (FC-FS, buffer-to-buffer flow control). At steady state a
credit comes back one round trip after its frame started: the frame's own
time on the wire, its propagation there and the R_RDY's back, and however long
the receiver holds the buffer (``credit_return``, a slow-drain device). So a
link carries at most ``bb_credits x frame_size`` bytes per round trip, and
never more than its bandwidth (docs/model.md, "The fabric: switches, credits
and slow drain").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["US_PER_KM", "credit_rate", "round_trip", "junctions", "drain_directions", "TO_ARRAY", "TO_HOST"]

US_PER_KM = 5e-6  # light in fibre: about 5 us per km, one way (conventions.md)
TO_ARRAY, TO_HOST = 0, 1


def round_trip(distance_km: float, frame_size: int, bandwidth: float, credit_return: float = 0.0) -> float:
    """Seconds from a frame's first bit leaving until its R_RDY is back: 2 x propagation + frame time + credit_return."""
    return 2.0 * distance_km * US_PER_KM + frame_size / bandwidth + credit_return


def credit_rate(bb_credits: int, frame_size: int, bandwidth: float, distance_km: float, credit_return: float = 0.0) -> float:
    """Bytes per second a credit-limited link carries at steady state: min(bandwidth, credits x frame / round trip)."""
    bound = bb_credits * frame_size / round_trip(distance_km, frame_size, bandwidth, credit_return)
    return min(bandwidth, bound)


def junctions(ends: Sequence[Sequence[str]], switches: Iterable[str]) -> list[str]:
    """The switch each pair of consecutive links of a route meets at, in order (the loader has checked they meet)."""
    names = set(switches)
    out = []
    for a, b in zip(ends, ends[1:]):
        out.append(next(x for x in a if x in b and x in names))
    return out


def drain_directions(between: Sequence[str] | None, switches: Iterable[str], routes: Iterable[Sequence[str]], name: str) -> tuple[bool, bool]:
    """The directions (to the array, to the host) whose frames a link's port end receives: where its credit_return
    and a slow drain act. A link with one end a port (not a switch) drains slowly towards that port: a host port
    when the link is not the last of a route that crosses it, an array port when it is not the first. Without
    ``between``, an ISL, or no route that tells: both directions (an assumption, docs/model.md)."""
    if between is None:
        return (True, True)
    names = set(switches)
    ports = [x for x in between if x not in names]
    if len(ports) != 1:
        return (True, True)
    for route in routes:
        if name not in route or len(route) < 2:
            continue
        j = list(route).index(name)
        if j < len(route) - 1:
            return (False, True)  # the host's port: it receives what flows to the host (read data)
        return (True, False)  # the array's port: it receives what flows to the array (write data)
    return (True, True)
