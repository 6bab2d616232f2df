"""multipathd's handling of failed and shaky paths, beside dm-multipath's path groups (``pathsel/policies/dm_mpath.py``).

Sources (multipath-tools 0.14.3, https://github.com/opensvc/multipath-tools, and Linux ``drivers/md/dm-mpath.c``):

* ``dm-mpath.c`` ``multipath_end_io`` / ``fail_path``: an I/O that ends with a
  path error (a timeout included) fails its path in the kernel table and is
  requeued; the path is out of every selector's valid list until multipathd
  reinstates it (``reinstate_path``).
* ``multipathd/main.c`` ``update_multipath``: a path dm failed is marked down
  and checked at its next tick at the latest; ``check_path``: a path whose
  checker says up is reinstated, unless ``should_skip_path`` keeps it
  "delayed"; ``check_path_reinstate_state`` (san_path_err);
  ``followover_should_failback`` / ``do_followover_should_failback``.
* ``libmultipath/io_err_stat.c`` (marginal_path): ``io_err_stat_handle_pathfail``
  (two path failures within ``marginal_path_double_failed_time`` s:
  ``FLAKY_PATHFAIL_THRESHOLD`` 2), ``need_io_err_check`` (sampling starts at
  the first check that finds the path up, again ``recheck_gap_time`` s after a
  bad sample; no usable path left: reinstated at once), ``end_io_err_stat``
  (error rate per thousand = errors x 1000 / probes; ``<=`` threshold: good),
  probes: a batch of up to 32 direct reads every 100 ms (10 Hz), an error being
  a probe that ends down, disconnected or after ``IOTIMEOUT_SEC`` (60 s).
* ``libmultipath/propsel.c``: marginal_path on (all four keys > 0) turns the
  san_path_err keys off; ``marginal_path_err_sample_time`` below 120 s
  (``2 * IOTIMEOUT_SEC``) is raised to 120. ``libmultipath/defaults.h``:
  ``DEFAULT_CHECKINT`` 5 (polling_interval), every san_path_err / marginal
  key "no".
* ``multipath/multipath.conf.5``: "Shaky paths detection" (san_path_err
  forgets one failure every ``san_path_err_forget_rate`` checks of a working
  path; a path failed more than ``san_path_err_threshold`` times stays out for
  ``san_path_err_recovery_time`` s).

Assumptions where the sources are silent or pathsel is coarser:

* Checker ticks fall every ``polling_interval`` seconds from the run's start,
  the same for every path (multipathd checks each path on its own tick and
  stretches a healthy path's interval to ``max_polling_interval``). A tick
  at the same instant as another event runs before it.
* A path that goes down and up on the wire is seen by the host after its
  ``detection`` delay (the checker); that notice counts as the checker's
  verdict at that instant, so a path seen going down is a path failure
  (san_path_err counts it when it comes back; marginal_path counts it) and a
  path seen coming up is checked at once.
* An attempt the engine fails (aborted at ``io_timeout``, or lost on a path
  the host then sees go down) is dm's ``fail_path``; a path failed so while
  its wire is seen up comes back at the first tick strictly after the failure.
* marginal_path's probes are pathsel-free: a probe is an error when the host
  sees the path down at the probe's instant, so a sample's error rate is the
  share of its time the path was seen down (per thousand). A lossy link's
  frames are resent and are not errors; a slow path's probes finish under 60 s
  and are not errors either. A path marginal_path holds is checked at every
  checker loop (should_skip_path and end_io_err_stat set ``pp->tick = 1``):
  loops fall every second (``polling_interval / floor(polling_interval)`` s;
  each check for a pathsel fraction below 1 s), so the verdict is applied at
  the first loop at or after the sample's end.
* ``marginal_pathgroups`` is not modelled (held paths are out, as with it off).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .framework.define import INT32_MAX, Param, compiled, compiled_inline, per_device, per_path, scalar

__all__ = ["MULTIPATHD", "MULTIPATHD_STATE", "SAMPLE_MIN", "off_int", "multipathd_setup"]

POLL_MIN = 0.001  # multipath.conf takes whole seconds; pathsel takes fractions down to this (sped-up tests)
SAMPLE_MIN = 120  # 2 * IOTIMEOUT_SEC (libmultipath/defaults.h, propsel.c)
M_NONE, M_WAITING, M_SAMPLING = 0, 1, 2  # io_err_pathfail_cnt's states: nothing, PATH_IO_ERR_WAITING_TO_CHECK, _IN_CHECKING


def off_int(name: str):
    """multipath.conf's "no" or a whole number > 0 (dict.c set_off_int_undef: "no" and 0 are off); 0 for off."""

    def parse(raw: Any) -> int:
        text = str(raw).strip().lower()
        if text in ("no", "0", "off"):
            return 0
        try:
            value = int(text) if text.isascii() else -1  # int() reads '\u0663' as 3: ASCII digits only
        except ValueError:
            value = -1
        if isinstance(raw, bool) or isinstance(raw, float) or value <= 0 or value > INT32_MAX:
            raise ValueError(f"{name} must be no or a whole number > 0, got {raw!r}")
        return value

    return parse


def _polling(raw: Any) -> float:
    """polling_interval: whole seconds > 0 (multipath.conf takes an integer; pathsel also takes a fraction)."""
    try:
        value = float(raw) if not isinstance(raw, str) or raw.isascii() else math.nan  # ASCII digits only
    except (TypeError, ValueError):
        value = math.nan
    if isinstance(raw, bool) or not (POLL_MIN <= value <= INT32_MAX):  # 1 ms at least: the checker walks its ticks
        raise ValueError(f"polling_interval must be a number of seconds in {POLL_MIN:g}..{INT32_MAX}, got {raw!r}")
    return int(value) if value.is_integer() else value


def _off(name: str, doc: str, unit: str = "") -> Param:
    return Param(name, 0, int, doc, parse=off_int(name), unit=unit, shown=f"no [no, whole number > 0{' ' + unit if unit else ''}]")


MULTIPATHD = (
    Param(
        "polling_interval",
        5,
        float,
        "seconds between multipathd's path checks (a path failed by an I/O error comes back at the next)",
        parse=_polling,
        shown="5 s [0.001 … 2147483647]",
    ),
    _off("san_path_err_threshold", "a path failed more than this many times is kept out for san_path_err_recovery_time"),
    _off("san_path_err_forget_rate", "checks of a working path that forget one counted failure"),
    _off("san_path_err_recovery_time", "seconds a path over san_path_err_threshold is kept out", "s"),
    _off("marginal_path_double_failed_time", "two failures within this many seconds start an I/O error sample", "s"),
    _off("marginal_path_err_sample_time", "seconds of sampling (probes at 10 Hz) while the path is kept out (values below 120 read as 120)", "s"),
    _off("marginal_path_err_rate_threshold", "errors per thousand probes above which the path stays out"),
    _off("marginal_path_err_recheck_gap_time", "seconds a path over the error rate is kept out before it is sampled again", "s"),
)

# failed: when dm failed the path (-1: not failed); san_n / san_fg / san_dis: path_failures, the forget countdown,
# dis_reinstate_time (-1: reinstatement allowed); pf_n / pf_t: io_err_pathfail_cnt and its start; marg / marg_t:
# M_* and when its sample or gap started (-1: "dis_reinstate_time 0", sample at the first up check); dn_t / dn_from:
# the time seen down during the sample and since when (-1: seen up); chk_dn: the checker's last verdict
# (pp->chkrstate) was down; tick: the last checker loop run (per device), every ``step`` s; a polling_interval
# check is every ``every`` loops (step 1 s for multipath.conf's whole seconds: multipathd's checker loop).
MULTIPATHD_STATE = (
    per_path("failed", "f8", -1),
    per_path("san_n"),
    per_path("san_fg"),
    per_path("san_dis", "f8", -1),
    per_path("pf_n"),
    per_path("pf_t", "f8", 0),
    per_path("marg"),
    per_path("marg_t", "f8", -1),
    per_path("dn_t", "f8", 0),
    per_path("dn_from", "f8", -1),
    per_path("chk_dn"),
    per_device("tick", init=0),
    scalar("poll", "f8", 5),
    scalar("step", "f8", 1),
    scalar("every", init=5),
    scalar("san_thr"),
    scalar("san_forget"),
    scalar("san_rec"),
    scalar("m_dft"),
    scalar("m_st"),
    scalar("m_thr"),
    scalar("m_gap"),
)


def multipathd_setup(params: dict[str, Any], state: Any) -> None:
    """The scalars from the parameters, with propsel.c's rules: marginal_path on turns san_path_err off."""
    p = {k.name: params.get(k.name, k.default) for k in MULTIPATHD}
    poll = float(p["polling_interval"])
    every = max(1, int(poll))  # whole seconds: a loop a second; a pathsel fraction below 1: a loop a check
    state.set_scalar("poll", poll)
    state.set_scalar("every", every)
    state.set_scalar("step", poll / every)
    marginal = all(
        p[k] > 0
        for k in (
            "marginal_path_double_failed_time",
            "marginal_path_err_sample_time",
            "marginal_path_err_rate_threshold",
            "marginal_path_err_recheck_gap_time",
        )
    )
    san = not marginal and all(p[k] > 0 for k in ("san_path_err_threshold", "san_path_err_forget_rate", "san_path_err_recovery_time"))
    state.set_scalar("san_thr", p["san_path_err_threshold"] if san else 0)
    state.set_scalar("san_forget", p["san_path_err_forget_rate"] if san else 0)
    state.set_scalar("san_rec", p["san_path_err_recovery_time"] if san else 0)
    state.set_scalar("m_dft", p["marginal_path_double_failed_time"] if marginal else 0)
    state.set_scalar("m_st", max(p["marginal_path_err_sample_time"], SAMPLE_MIN) if marginal else 0)
    state.set_scalar("m_thr", p["marginal_path_err_rate_threshold"] if marginal else 0)
    state.set_scalar("m_gap", p["marginal_path_err_recheck_gap_time"] if marginal else 0)


# -- compiled: what the selectors call ----------------------------------------------------------------------
@compiled_inline
def held(st, d, k):
    """multipathd or dm keeps path k out although its wire may be up: failed by an error, delayed, sampled."""
    return st.failed[d, k] >= 0 or st.san_dis[d, k] >= 0 or st.marg[d, k] != M_NONE


@compiled
def pathfail(st, d, k, now):
    """A dm path failure (PATH_FAILED uevent): io_err_stat_handle_pathfail's count, then the path is failed."""
    if st.failed[d, k] >= 0:  # failed already: dm sends no second PATH_FAILED
        return
    st.failed[d, k] = now
    if st.m_st <= 0 or st.marg[d, k] != M_NONE:
        return
    if st.pf_n[d, k] == 0:
        st.pf_n[d, k] = 1
        st.pf_t[d, k] = now
        return
    if now - st.pf_t[d, k] > st.m_dft:  # whole seconds in multipathd; pathsel's clock is finer
        st.pf_n[d, k] = 0
        st.pf_t[d, k] = now
    st.pf_n[d, k] += 1
    if st.pf_n[d, k] >= 2:  # FLAKY_PATHFAIL_THRESHOLD
        st.marg[d, k] = M_WAITING
        st.marg_t[d, k] = -1.0  # io_err_dis_reinstate_time = 0: sampled as soon as the checker finds it up
        st.pf_n[d, k] = 0


@compiled
def check_up(st, d, k, now, active):
    """check_path for a path the checker finds up at ``now``: reinstate it unless should_skip_path keeps it out.

    ``active``: the device's usable paths (count_active_paths). Returns True when the path is back in use."""
    was_bad = st.failed[d, k] >= 0
    if st.m_st > 0:  # marginal_path (io_err_stat.c need_io_err_check, end_io_err_stat)
        if st.marg[d, k] == M_SAMPLING and now >= st.marg_t[d, k] + st.m_st:
            down = st.dn_t[d, k]
            rate = down * 1000.0 / st.m_st
            if rate <= st.m_thr or active <= 0:
                st.marg[d, k] = M_NONE
            else:
                st.marg[d, k] = M_WAITING
                st.marg_t[d, k] = st.marg_t[d, k] + st.m_st  # the gap counts from the sample's end
        elif st.marg[d, k] == M_WAITING:
            if active <= 0:  # "no paths. recovering early"
                st.marg[d, k] = M_NONE
            elif st.marg_t[d, k] < 0 or now - st.marg_t[d, k] > st.m_gap:
                st.marg[d, k] = M_SAMPLING
                st.marg_t[d, k] = now
                st.dn_t[d, k] = 0.0
        elif st.marg[d, k] == M_SAMPLING and active <= 0:
            st.marg[d, k] = M_NONE
        if st.marg[d, k] != M_NONE:
            return False
    elif st.san_rec > 0:  # san_path_err (main.c check_path_reinstate_state)
        if st.san_dis[d, k] >= 0:
            if active > 0 and was_bad:  # failed again while delayed: a new stable period, before the test
                st.san_fg[d, k] = st.san_forget
                st.san_dis[d, k] = now
                st.failed[d, k] = -1.0
            if active <= 0 or now - st.san_dis[d, k] > st.san_rec:  # "no active paths": reinstated early
                st.san_n[d, k] = 0
                st.san_fg[d, k] = 0
                st.san_dis[d, k] = -1.0
                was_bad = True  # delayed counts as failed: reinstate_path
            else:
                return False
        elif not was_bad:
            if st.san_n[d, k] > 0:  # forget errors on a working path
                if st.san_fg[d, k] > 0:
                    st.san_fg[d, k] -= 1
                else:
                    st.san_n[d, k] -= 1
                    st.san_fg[d, k] = st.san_forget
            return False
        else:
            if st.san_n[d, k] == 0:
                st.san_fg[d, k] = st.san_forget
            st.san_n[d, k] += 1
            if st.san_n[d, k] > st.san_thr:
                st.san_dis[d, k] = now
                st.failed[d, k] = -1.0
                return False
    st.failed[d, k] = -1.0
    return was_bad


@compiled
def seen_down(st, d, k, now):
    """The host sees path k go down (the checker): a path failure; the sample's down time starts."""
    pathfail(st, d, k, now)
    st.dn_from[d, k] = now
    st.chk_dn[d, k] = 1


@compiled
def seen_up(st, d, k, now):
    """The host sees path k come up: the sample's down time stops."""
    if st.dn_from[d, k] >= 0:
        if st.marg[d, k] == M_SAMPLING:
            st.dn_t[d, k] += now - max(st.dn_from[d, k], st.marg_t[d, k])
        st.dn_from[d, k] = -1.0


@compiled
def last_loop(st, now):
    """The last checker loop at or before ``now``: the largest n with n * step <= now, loop n's time being exactly the
    float n * step (floor(now / step) alone is one short at 4.3 / 0.1, and the loop would never run)."""
    n = np.int64(math.floor(now / st.step))
    while (n + 1) * st.step <= now:
        n += 1
    while n > 0 and n * st.step > now:
        n -= 1
    return n


@compiled_inline
def fast(st, d, k):
    """marginal_path keeps path k out after a check (should_skip_path: ``pp->tick = 1``; end_io_err_stat too): it is
    checked at every loop (each second), not every polling_interval."""
    return st.marg[d, k] != M_NONE and st.marg_t[d, k] >= 0


@compiled
def any_fast(st, d, n):
    for k in range(n):
        if fast(st, d, k):
            return True
    return False


@compiled
def any_counted(st, d, n):
    """A path with san_path_err failures to forget."""
    for k in range(n):
        if st.san_n[d, k] > 0:
            return True
    return False


@compiled
def any_held(st, d, n):
    for k in range(n):
        if held(st, d, k):
            return True
    return False
