"""The selectors that test working-set membership instead of listing the set, against models that list it.

HPP LB-RR, LB-IOPS, LB-BYTES and MSDSM Least Queue Depth, Weighted Paths and
Least Blocks ask ``ws_tier`` / ``ws_member`` / ``ws_next`` about the paths
they look at (an I/O that stays on its path costs no scan). Each model here
lists ``pathsel.alua_working_set`` on every I/O and applies the policy's rule
to the list, as the selectors did before; Hypothesis drives both through the
same I/Os, completions, path failures, returns and ALUA changes. Each
device has its own policy here (the adapter calls it as device 0); the
engines' differential tests run these policies with several devices.
"""

from __future__ import annotations

import os

from hypothesis import example, given, settings
from hypothesis import strategies as st

import pathsel
from pathsel.policies import build_policy

from .policy_rig import Rig

STATES = ["AO", "ANO", "standby", "unavailable", "transitioning"]


class _Cursor:
    """HPP LB-RR: the next working path once ``iops`` I/Os or ``nbytes`` bytes went down the current one."""

    def __init__(self, iops: int, nbytes: int) -> None:
        self.iops, self.nbytes, self.cur, self.count, self.sent = iops, nbytes, -1, 0, 0

    def select(self, paths, size):
        ws = [k for k, p in enumerate(paths) if p in pathsel.alua_working_set(paths)]
        if not ws:
            return None
        if self.cur not in ws or self.count >= self.iops or self.sent >= self.nbytes:
            after = [k for k in ws if k > self.cur]
            self.cur = after[0] if after else ws[0]
            self.count = self.sent = 0
        self.count += 1
        self.sent += size
        return self.cur


class _Least:
    """HPP LB-IOPS / LB-BYTES: after ``limit`` I/Os (or bytes), the first working path with the least outstanding."""

    def __init__(self, limit: int, by_bytes: bool) -> None:
        self.limit, self.by_bytes, self.cur, self.count = limit, by_bytes, -1, 0

    def select(self, paths, size):
        ws = [k for k, p in enumerate(paths) if p in pathsel.alua_working_set(paths)]
        if not ws:
            return None
        if self.cur not in ws or self.count >= self.limit:
            load = [paths[k].outstanding_bytes if self.by_bytes else paths[k].outstanding for k in ws]
            self.cur = ws[load.index(min(load))]
            self.count = 0
        self.count += size if self.by_bytes else 1
        return self.cur


class _Msdsm:
    """MSDSM LQD, WP, LB: on every I/O the first working path with the least key."""

    def __init__(self, key) -> None:
        self.key = key

    def select(self, paths, size):
        ws = [k for k, p in enumerate(paths) if p in pathsel.alua_working_set(paths)]
        if not ws:
            return None
        keys = [self.key(paths[k]) for k in ws]
        return ws[keys.index(min(keys))]


CASES = {
    "hpp:lb-rr:iops=2,bytes=12288": lambda w: _Cursor(2, 12288),
    "hpp:lb-iops:iops=3": lambda w: _Least(3, False),
    "hpp:lb-bytes:bytes=16384": lambda w: _Least(16384, True),
    "mpio:lqd": lambda w: _Msdsm(lambda p: p.controller_outstanding),
    "mpio:wp": lambda w: _Msdsm(lambda p: w[p.index]),
    "mpio:lb": lambda w: _Msdsm(lambda p: p.controller_outstanding_bytes),
}

op = st.one_of(
    st.tuples(st.just("io"), st.sampled_from([512, 4096, 65536])),
    st.tuples(st.just("done"), st.integers(0, 50)),
    st.tuples(st.just("down"), st.integers(0, 5)),
    st.tuples(st.just("up"), st.integers(0, 5)),
    st.tuples(st.just("alua"), st.integers(0, 5), st.sampled_from(STATES)),
)


@settings(max_examples=int(os.environ.get("PATHSEL_EXAMPLES", "200")), deadline=None)  # PATHSEL_EXAMPLES=2000 searches longer
@given(
    spec=st.sampled_from(sorted(CASES)),
    alua=st.lists(st.sampled_from(STATES), min_size=1, max_size=6),
    weights=st.lists(st.integers(0, 3), min_size=6, max_size=6),
    controllers=st.lists(st.integers(0, 2), min_size=6, max_size=6),
    ops=st.lists(op, min_size=1, max_size=60),
)
# the cursor moves on after its limit, to the next path (not the current one again)
@example(spec="hpp:lb-rr:iops=2,bytes=12288", alua=["AO", "AO"], weights=[0] * 6, controllers=[0, 1, 0, 0, 0, 0], ops=[("io", 512)] * 3)
# ANO paths only while no AO path is usable, whatever their key
@example(spec="mpio:wp", alua=["ANO", "AO"], weights=[0, 3, 0, 0, 0, 0], controllers=[0] * 6, ops=[("io", 512)])
@example(spec="hpp:lb-iops:iops=3", alua=["ANO", "AO", "AO"], weights=[0] * 6, controllers=[0] * 6, ops=[("io", 512)] * 5)
def test_membership_selectors_choose_as_the_listed_working_set(spec, alua, weights, controllers, ops):
    n = len(alua)
    weights, controllers = weights[:n], controllers[:n]
    rig = Rig(alua, weights=weights, controllers=controllers)
    rig.bind(build_policy(spec))
    model = CASES[spec](weights)
    paths = rig.devices[0].paths
    in_flight = []
    for o in ops:
        if o[0] == "io":
            want = model.select(paths, o[1])
            io, p = rig.pick(o[1])
            assert (p.index if p is not None else None) == want, (spec, o)
            if p is not None:
                in_flight.append((io, p))
        elif o[0] == "done" and in_flight:
            io, p = in_flight.pop(o[1] % len(in_flight))
            rig.complete(io, p, 0.001)
        elif o[0] in ("down", "up") and o[1] < n:
            getattr(rig, o[0])(o[1])
        elif o[0] == "alua" and o[1] < n:
            rig.alua(o[1], o[2])
