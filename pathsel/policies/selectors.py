"""Selector pieces more than one family runs: FIXED's preferred path, round robin's cursor, ``use_ano``.

ESXi NMP's VMW_PSP_FIXED and VMW_PSP_RR (:mod:`pathsel.policies.esxi`) were
first; HPP's FIXED (:mod:`.hpp`), MSDSM's Failover Only and Round Robin
(:mod:`.mpio`) run the same hooks, and the guard and P2C-EWMA policies take
the same ``use_ano`` parameter. Each family imports them from here, ESXi
included, so that no family imports another. The assumptions they make are
written in :mod:`pathsel.policies.esxi`'s docstring.
"""

from __future__ import annotations

from .framework.define import Param, Setup, compiled_inline
from .framework.kernel import usable, working_set, ws_member, ws_next, ws_tier

__all__ = ["USE_ANO", "fixed_preferred", "fixed_select", "fixed_setup", "rr_select"]

USE_ANO = Param("use_ano", 0, int, "1 adds ANO paths to the set the policy uses (esxcli useANO)", 0, 1, shown="0 [0, 1]")


def fixed_preferred(paths, preferred: str = ""):
    """The path FIXED prefers: the one named, else its path over the nexus named, else the first AO path, else the
    first path.

    ``paths`` are anything with ``name`` and ``alua`` (views, compiled paths), and ``nexus`` where known, so
    the policy and the analytic model share this one rule. A device's own path name (``vmhba2:C0:T0:L3``) is
    ESXi's per-device preference; a nexus (``vmhba2:C0:T0``) prefers that nexus on every device it serves.
    """
    named = [p for p in paths if p.name == preferred] or [p for p in paths if preferred and getattr(p, "nexus", None) == preferred]
    ao = [p for p in paths if p.alua == "AO"]
    return named[0] if named else (ao[0] if ao else paths[0])


# -- FIXED: the preferred path, else an alternate kept until it returns ----------------------
@compiled_inline
def fixed_select(v, st, d, slot):
    pref = st.pref[d]
    if usable(v, v.d_paths[d, pref]):
        st.cur[d] = pref
    elif st.cur[d] < 0 or not usable(v, v.d_paths[d, st.cur[d]]):
        n = working_set(v, d, False, st.tmp)
        st.cur[d] = st.tmp[0] if n > 0 else -1
    return st.cur[d]


class _Named:
    def __init__(self, name: str, alua: str, nexus: str | None) -> None:
        self.name, self.alua, self.nexus = name, alua, nexus


def fixed_setup(s: Setup) -> None:
    """The preferred path of each device: named by ``preferred``, else its first AO path."""
    for d, dev in enumerate(s.devices):
        nexus = dev.nexus or (None,) * len(dev.names)
        named = [_Named(n, a, x) for n, a, x in zip(dev.names, dev.alua, nexus)]
        s.state.pref[d] = named.index(fixed_preferred(named, s.params.get("preferred", "")))


# -- round robin (iops or bytes): one cursor per device ---------------------------------------
# One cursor per device over the working paths: every issued I/O goes to the cursor path;
# after ``iops`` I/Os (or once ``bytes`` bytes have been sent) the next I/O goes to the
# next working path. Working paths: the usable AO paths, ANO only when no AO path is
# left, or both with use_ano=1. The working set is never listed: membership is tested
# for the one or two paths looked at.
@compiled_inline
def rr_select(v, st, d, slot):
    cur = st.cur[d]
    limit = st.iops if st.type == 0 else st.bytes
    tier = ws_tier(v, d, st.use_ano != 0, cur)
    if cur < 0 or not ws_member(v, v.d_paths[d, cur], tier) or st.count[d] >= limit:
        cur = ws_next(v, d, cur, tier)
        if cur < 0:  # an empty working set
            return -1
        st.count[d] = 0
    st.cur[d] = cur
    st.count[d] += 1 if st.type == 0 else v.s_size[slot]
    return cur
