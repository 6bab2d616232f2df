"""Hitachi Dynamic Link Manager (HDLM): Extended Least I/Os (its default), Extended Round Robin, Extended Least Blocks.

Source: Hitachi, "Hitachi Dynamic Link Manager (for Linux®) User Guide",
"Load Balancing Algorithms" (HDLM Functions, pp. 2-17 to 2-18 of the
HP XP P9500 edition,
http://www.manualshelf.com/manual/hp/hp-xp-p9500-storage-dkc-module-1-controller-base-rack/hitachi-dynamic-link-manager-software-users-guide-for-linux/page-41.html
and page-42.html), and Hitachi Vantara, "Dynamic Link Manager (for Linux®)
User Guide" 9.0.x, MK-92DLM113-64, 2025, "Setting up load balancing"
(``dlnkmgr set -lb on -lbtype exlio``; the default is the Extended Least
I/Os algorithm), https://docs.hitachivantara.com/r/en-us/mk-92dlm113/latest/.

The manual's words:

* The extended algorithms "determine which path to allocate based on whether
  the I/O to be issued is sequential with the immediately preceding I/O. If
  the I/O is sequential with the previous I/O, the path to which the previous
  I/O was distributed will be used. However, if a specified number of I/Os
  has been issued to a path, processing switches to the next path. If the I/O
  is not sequential with the previous I/O, these algorithms select the path
  to be used each time an I/O request is issued."
* Extended Round Robin: "The paths are simply selected in order from among
  all the connected paths"; Extended Least I/Os: "the path that has the least
  number of I/Os being processed"; Extended Least Blocks: "the least number
  of I/O blocks being processed".
* Owner paths before non-owner paths: on storage with an owner controller
  the load is balanced over owner paths, non-owner paths being used only when
  no owner path is usable ("starting with owner paths, and then non-owner
  paths"); on the others "all online paths are owner paths".

Assumptions (the manual is silent, or pathsel is coarser):

* pathsel's I/Os carry no block address. An I/O is "sequential with the
  previous I/O" when its job is sequential (fio ``rw`` read, write,
  rw/readwrite; ``view.s_seq``) and the device's previous I/O came from the
  same job.
* "A specified number of I/Os": the manual does not give it nor a setting
  for it; pathsel's ``seq_ios`` (default 100, pathsel-only) is the length of
  a run on one path. "Switches to the next path": Extended Round Robin takes
  the next path in order; Extended Least I/Os and Least Blocks take their
  least loaded path other than the one the run used (when there is another).
* Owner paths are ALUA AO paths, non-owner ANO (the ALUA working set).
* Least I/Os counts this device's I/Os in flight on the path (``v.out``),
  Least Blocks its bytes in flight (``v.out_bytes``); ties go to the first
  path in path order. Round robin's order is path order.
"""

from __future__ import annotations

from .framework.adapter import policy_class
from .framework.define import Param, PolicyDef, Snapshot, compiled, per_device, scratch
from .framework.kernel import working_set

__all__ = ["EXLIO", "EXRR", "EXLBK", "HdlmExtendedLeastIos", "HdlmExtendedRoundRobin", "HdlmExtendedLeastBlocks"]

KIND_RR, KIND_LIO, KIND_LBK = 0, 1, 2


@compiled
def least(v, st, d, n, skip, blocks):
    """The working-set path with the fewest I/Os (or bytes) in flight, the first of equals; ``skip`` is left out
    when another path is there."""
    best = -1
    best_load = 0
    for i in range(n):
        k = st.tmp[i]
        if k == skip and n > 1:
            continue
        p = v.d_paths[d, k]
        load = v.out_bytes[p] if blocks else v.out[p]
        if best < 0 or load < best_load:
            best = k
            best_load = load
    return best


@compiled
def next_in_order(st, d, n, after):
    """Round robin: the first working-set path after position ``after`` in path order, wrapping."""
    for i in range(n):
        if st.tmp[i] > after:
            return st.tmp[i]
    return st.tmp[0]


@compiled
def extended_select(v, st, d, slot, kind):
    n = working_set(v, d, False, st.tmp)  # owner (AO) paths; non-owner (ANO) only when no owner path is usable
    if n == 0:
        return -1
    seq = v.s_seq[slot]
    last = st.last[d]
    in_set = False
    for i in range(n):
        if st.tmp[i] == last:
            in_set = True
    if seq >= 0 and seq == st.last_job[d] and in_set:
        if st.run[d] < st.seq_ios:
            k = last  # sequential with the previous I/O: the previous I/O's path
            st.run[d] += 1
            st.last_job[d] = seq
            return k
        # the run is long enough: switch to the next path
        if kind == KIND_RR:
            k = next_in_order(st, d, n, last)
        else:
            k = least(v, st, d, n, last, kind == KIND_LBK)
    elif kind == KIND_RR:
        k = next_in_order(st, d, n, st.cursor[d])
    else:
        k = least(v, st, d, n, -1, kind == KIND_LBK)
    if kind == KIND_RR:
        st.cursor[d] = k
    st.run[d] = 1
    st.last[d] = k
    st.last_job[d] = seq
    return k


@compiled
def exrr_select(v, st, d, slot):
    return extended_select(v, st, d, slot, KIND_RR)


@compiled
def exlio_select(v, st, d, slot):
    return extended_select(v, st, d, slot, KIND_LIO)


@compiled
def exlbk_select(v, st, d, slot):
    return extended_select(v, st, d, slot, KIND_LBK)


SEQ_IOS = Param(
    "seq_ios",
    100,
    int,
    "pathsel-only: I/Os of one sequential run on a path before it switches (the manual's 'specified number')",
    1,
    1_000_000,
    shown="100 [1 … 1000000]",
)
STATE = (
    per_device("last", init=-1),  # the path of the device's previous I/O
    per_device("last_job", init=-1),  # its job when sequential, else -1
    per_device("run", init=0),  # I/Os of the current sequential run on ``last``
    per_device("cursor", init=-1),  # round robin's position
    scratch("tmp"),
)


def _config(lbtype: str):
    def config(s: Snapshot) -> str:
        k = int(s.state.last[s.d])
        where = s.names[k] if k >= 0 else "none"
        return f"dlnkmgr set -lb on -lbtype {lbtype} (sequential run {int(s.state.run[s.d])}/{s.params['seq_ios']} on {where})"

    return config


EXLIO = PolicyDef(
    "hdlm:exlio",
    "Hitachi HDLM Extended Least I/Os (HDLM's default): a sequential I/O stays on the previous path, others go to the fewest I/Os in flight",
    "Hitachi Dynamic Link Manager User Guide, Load Balancing Algorithms (`dlnkmgr set -lbtype exlio`, the default)",
    select=exlio_select,
    params=(SEQ_IOS,),
    aliases=("hdlm",),
    state=STATE,
    config_string=_config("exlio"),
    class_name="HdlmExtendedLeastIos",
    counts="this device's I/Os in flight per path; the job and path of its previous I/O",
    notes="An I/O sequential with the device's previous one (*assumed:* both from the same sequential fio job: rw read, write, rw/readwrite) goes to the previous I/O's path until the run reaches `seq_ios` I/Os (pathsel-only; the manual gives no number), then to the least loaded other path; any other I/O to the owner (AO) path with the fewest I/Os in flight, the first of equals. Non-owner (ANO) paths only when no owner path is usable.",
)
EXRR = PolicyDef(
    "hdlm:exrr",
    "Hitachi HDLM Extended Round Robin: a sequential I/O stays on the previous path, others go round robin",
    "Hitachi Dynamic Link Manager User Guide, Load Balancing Algorithms (`dlnkmgr set -lbtype exrr`)",
    select=exrr_select,
    params=(SEQ_IOS,),
    state=STATE,
    config_string=_config("exrr"),
    class_name="HdlmExtendedRoundRobin",
    counts="nothing but its place in the rotation and the job and path of the previous I/O",
    notes="As `hdlm:exlio`, but an I/O that is not sequential with the previous one (and a run that reached `seq_ios`) takes the next owner (AO) path in path order.",
)
EXLBK = PolicyDef(
    "hdlm:exlbk",
    "Hitachi HDLM Extended Least Blocks: a sequential I/O stays on the previous path, others go to the fewest blocks in flight",
    "Hitachi Dynamic Link Manager User Guide, Load Balancing Algorithms (`dlnkmgr set -lbtype exlbk`)",
    select=exlbk_select,
    params=(SEQ_IOS,),
    state=STATE,
    config_string=_config("exlbk"),
    class_name="HdlmExtendedLeastBlocks",
    counts="this device's bytes in flight per path; the job and path of its previous I/O",
    notes="As `hdlm:exlio`, but by blocks (bytes) in flight instead of I/Os.",
)
HdlmExtendedLeastIos = policy_class(EXLIO, "HdlmExtendedLeastIos", module=__name__)
HdlmExtendedRoundRobin = policy_class(EXRR, "HdlmExtendedRoundRobin", module=__name__)
HdlmExtendedLeastBlocks = policy_class(EXLBK, "HdlmExtendedLeastBlocks", module=__name__)
