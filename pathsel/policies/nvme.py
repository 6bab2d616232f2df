"""Linux NVMe native multipath: ``iopolicy`` numa, round-robin and queue-depth.

Source: Linux ``drivers/nvme/host/multipath.c`` (6.11+),
https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/tree/drivers/nvme/host/multipath.c:

* ``__nvme_find_path(head, node)``: the first live optimized path (numa: the
  one at the least ``node_distance(node, ctrl->numa_node)``, the first of
  equals), else likewise the nearest non-optimized one; it becomes
  ``current_path[node]``.
* ``nvme_numa_path``: keep ``current_path[numa_node_id()]`` while it is live
  and optimized, otherwise ``__nvme_find_path`` for that node.
* ``nvme_round_robin_path``: from the path after the current one, wrapping,
  the first live optimized path; failing that, stay on the current path if
  it is optimized, else the *last* non-optimized path met (so rotation over
  non-optimized paths runs backwards), else the current path if usable.
* ``nvme_queue_depth_path``: the first path with the fewest active requests
  on its *controller* (``ctrl->nr_active``, counted in
  ``nvme_mpath_start_request`` for every namespace on that controller),
  optimized before non-optimized; it returns at once on an optimized path
  at depth 0.
* ``nvme_mpath_set_live``: when a path becomes live and optimized every
  ``current_path`` is found again (back to the first optimized path). The
  paths went live before the run starts, so round-robin's ``current_path``
  is already the first optimized path and its first I/O goes to the next
  one (issue 51; with no optimized path it is none, and the first I/O finds
  the first non-optimized path).
* ``current_path`` is cleared only by ``nvme_mpath_clear_current_path(ns)``
  (every node where that path is current): from ``nvme_failover_req`` (a
  request failed over: pathsel's ``fail`` hook, an attempt lost on a path
  the host saw go down or aborted at io_timeout), namespace removal,
  ``nvme_mpath_clear_ctrl_paths`` (controller deletion, an iopolicy change)
  and ``nvme_mpath_revalidate_paths`` (a capacity change); none of the last
  four happens in a pathsel run. A controller that goes down (RESETTING,
  CONNECTING) leaves ``current_path`` alone: its path is only *disabled*
  (``nvme_path_is_disabled``), so round-robin walks on from it to the next
  path, and numa finds a path again because it is not optimized.

ANA states: AO is optimized, ANO non-optimized; standby and unavailable
(inaccessible) paths are never chosen; a path that is down is disabled.

Assumptions where the source is silent or the simulator is coarser:

* NUMA: the issuing CPU's node (``numa_node_id()``) is the workload's
  ``numa_node`` (its CPU set, coarsely), a controller's node is its path's
  ``numa_node`` (the HBA/NIC's, ``ctrl->numa_node``; never
  ``NUMA_NO_NODE``), and ``node_distance`` is the host's SLIT matrix.
  ``current_path`` is kept per node, as the kernel does, so workloads on two
  nodes may use two paths. Ties go to the first path in path order
  (``head->list`` = path order). Without NUMA keys every controller is at
  the same distance: numa picks the first optimized path.
* ``nvme_mpath_set_live`` finds the path again for every node of the host
  (``for_each_node``). round-robin's cursor is ``current_path`` of
  the issuing node too, so each node rotates on its own (its
  ``__nvme_find_path`` compares no distance: LOCAL_DISTANCE for all).
* A path the host sees go down (the controller leaves LIVE) stays
  ``current_path`` until a request fails over on it; an I/O in flight on it
  fails over when the host notices (the transport's error recovery cancels
  it), an I/O sent on it after that at once, and one aborted at io_timeout at
  the abort.
* Any path that comes up or changes ANA state and is then live and optimized
  triggers ``nvme_mpath_set_live`` (its controller re-reads the ANA log).
* queue-depth counts I/Os of every device on the controller (``v.c_out``):
  it assumes every namespace on that controller uses queue-depth too, as the
  kernel's per-subsystem iopolicy makes them.
* With a single path (``list_is_singular``) round-robin returns it only while
  it is usable. The kernel checks only that its controller is live and
  returns it in any ANA state: the command goes to the controller, which
  fails it with an ANA error (Asymmetric Access Inaccessible, Persistent
  Loss or Transition: NVM Express Base Specification, "Asymmetric Namespace
  Access Reporting"); ``nvme_failover_req`` then clears ``current_path`` and
  requeues the bio (and reads the ANA log), and the requeued bio finds no
  path and waits. pathsel carries no ANA error status on its wire, so its
  I/O waits at once: one round trip to the controller sooner, the same wait
  after (issue 51; ``tests/test_kernel_sequences.py`` walks it).
* numa's ``current_path`` starts empty and is found at each node's first I/O:
  that is the path ``nvme_mpath_set_live`` cached as the paths went live
  (every later change that could move it runs set_live again, or makes numa
  look again), so the choices are the kernel's; only the config string of a
  node that issued nothing says none.
"""

from __future__ import annotations

from ..limits import MAX_NUMA_NODES
from .framework.adapter import policy_class
from .framework.define import Field, PolicyDef, Setup, Snapshot, compiled, per_device
from .framework.kernel import ANO, AO, numa_nodes, usable

__all__ = ["NUMA", "ROUND_ROBIN", "QUEUE_DEPTH", "NvmeNuma", "NvmeRoundRobin", "NvmeQueueDepth"]

UINT_MAX = 4294967295
INT_MAX = 2147483647
LOCAL_DISTANCE = 10  # include/linux/topology.h


@compiled
def find_path(v, st, d, node, by_distance):
    """``__nvme_find_path(head, node)``: the live optimized path at the least distance (the first of equals), else
    likewise the nearest non-optimized one; it becomes ``current_path[node]`` (st.cur[d, node]). Distance is
    ``node_distance(node, ctrl->numa_node)`` under iopolicy=numa (``by_distance``), else LOCAL_DISTANCE for all."""
    found = -1
    fallback = -1
    found_distance = INT_MAX
    fallback_distance = INT_MAX
    for k in range(v.d_np[d]):
        p = v.d_paths[d, k]
        if v.up[p] != 1:
            continue
        distance = v.numa_dist[d, node, v.p_node[p]] if by_distance else LOCAL_DISTANCE
        if v.alua[p] == AO:
            if distance < found_distance:
                found_distance = distance
                found = k
        elif v.alua[p] == ANO:
            if distance < fallback_distance:
                fallback_distance = distance
                fallback = k
    if found < 0:
        found = fallback
    if found >= 0:
        st.cur[d, node] = found
    return found


@compiled
def head_path_change(v, st, d, k, by_distance):
    """nvme_update_ns_ana_state / a controller back LIVE: ``nvme_mpath_set_live`` finds every node's path again when
    this one is live and optimized. A path going down or leaving AO/ANO clears nothing (the kernel only disables it)."""
    p = v.d_paths[d, k]
    if v.up[p] == 1 and v.alua[p] == AO:
        for node in range(numa_nodes(v, d)):  # nvme_mpath_set_live: for_each_node, on this host
            find_path(v, st, d, node, by_distance)


@compiled
def head_fail(v, st, d, k, slot, elapsed):
    """``nvme_failover_req`` -> ``nvme_mpath_clear_current_path(ns)``: every node whose current path is ``k`` forgets
    it (the request is requeued: the next select finds a path again)."""
    for node in range(numa_nodes(v, d)):  # for_each_node, on this host
        if st.cur[d, node] == k:
            st.cur[d, node] = -1


@compiled
def numa_path_change(v, st, d, k):
    head_path_change(v, st, d, k, True)


@compiled
def rr_path_change(v, st, d, k):
    head_path_change(v, st, d, k, False)


@compiled
def numa_select(v, st, d, slot):
    """``nvme_numa_path``: the issuing node's cached path while it is optimized, else find one again for that node."""
    node = v.s_node[slot]  # numa_node_id(): the node of the CPU submitting the I/O
    k = st.cur[d, node]
    if k < 0 or not (v.up[v.d_paths[d, k]] == 1 and v.alua[v.d_paths[d, k]] == AO):
        k = find_path(v, st, d, node, True)
    return k


@compiled
def rr_select(v, st, d, slot):
    """``nvme_round_robin_path``: the next optimized path after the issuing node's current one."""
    node = v.s_node[slot]  # current_path[numa_node_id()]
    n = v.d_np[d]
    old = st.cur[d, node]
    if old < 0:
        return find_path(v, st, d, node, False)
    po = v.d_paths[d, old]
    if n == 1:
        return old if usable(v, po) else -1
    found = -1
    for step in range(1, n):
        k = (old + step) % n
        p = v.d_paths[d, k]
        if v.up[p] != 1:
            continue
        if v.alua[p] == AO:
            st.cur[d, node] = k
            return k
        if v.alua[p] == ANO:
            found = k  # the last one met wins
    if v.up[po] == 1 and (v.alua[po] == AO or (found < 0 and v.alua[po] == ANO)):
        return old
    if found < 0:
        return -1
    st.cur[d, node] = found
    return found


@compiled
def qd_select(v, st, d, slot):
    """``nvme_queue_depth_path``: fewest active requests on the path's controller, optimized first."""
    best_opt = -1
    best_non = -1
    min_opt = UINT_MAX
    min_non = UINT_MAX
    for k in range(v.d_np[d]):
        p = v.d_paths[d, k]
        if v.up[p] != 1:
            continue
        depth = v.c_out[v.p_ctrl[p]]
        if v.alua[p] == AO:
            if depth < min_opt:
                min_opt = depth
                best_opt = k
        elif v.alua[p] == ANO:
            if depth < min_non:
                min_non = depth
                best_non = k
        if min_opt == 0:
            break
    k = best_opt if best_opt >= 0 else best_non
    st.last[d] = k
    return k


def _rr_setup(s: Setup) -> None:
    """The host as the run starts: every path has gone live, each through ``nvme_update_ns_ana_state`` ->
    ``nvme_mpath_set_live``, which runs ``__nvme_find_path`` for every node when the path is optimized. Under
    iopolicy=round-robin that compares no distance, so every node's ``current_path`` is the first optimized path (path
    order: ``head->list``), and the first I/O goes to the one after it; with no optimized path none is set (set_live
    finds nothing for a non-optimized path) and the first I/O finds one."""
    for d, dev in enumerate(s.devices):
        first = next((k for k, a in enumerate(dev.alua) if a == "AO"), -1)
        s.state.cur[d, :] = first


def _current(s: Snapshot, iopolicy: str) -> str:
    """One node (every host without NUMA keys): ``current_path=NAME``; several: current_path per node, as the kernel
    keeps it. The nodes are the device's own host's (``d_nodes``), not the most of any host in the run: the kernel
    keeps ``head->current_path[node]`` for each node of the machine it runs on (``for_each_node``)."""
    cur = s.state.cur[s.d]
    n = int(s.view.d_nodes[s.d])
    if n == 1:
        k = int(cur[0])
        return f"iopolicy={iopolicy} current_path={s.names[k] if k >= 0 else 'none'}"
    parts = [f"node{i}:{s.names[int(cur[i])] if cur[i] >= 0 else 'none'}" for i in range(n)]
    return f"iopolicy={iopolicy} current_path=[{', '.join(parts)}]"


def _qd_config(s: Snapshot) -> str:
    k = int(s.state.last[s.d])
    if k < 0:
        return "iopolicy=queue-depth last_path=none nr_active=0"
    return f"iopolicy=queue-depth last_path={s.names[k]} nr_active={int(s.view.c_out[s.view.p_ctrl[s.paths[k]]])}"


NUMA = PolicyDef(
    "nvme:numa",
    "NVMe iopolicy=numa (the default): the optimized path nearest the issuing CPU's node, kept per node while it stays optimized",
    "Linux NVMe `iopolicy=numa` (the default); `drivers/nvme/host/multipath.c` (`nvme_numa_path`, `__nvme_find_path`, `nvme_mpath_set_live`)",
    select=numa_select,
    path_change=numa_path_change,
    fail=head_fail,
    state=(Field("cur", "i8", ("D", MAX_NUMA_NODES), -1),),  # current_path[node]
    config_string=lambda s: _current(s, "numa"),
    class_name="NvmeNuma",
    counts="nothing: one path at a time",
    notes="Per NUMA node of the issuing CPU (the workload's `numa_node`), the optimized (AO) path at the least `node_distance` to its controller's node (`[[paths]] numa_node`; the first of the nearest), kept while it stays live and optimized; non-optimized (ANO) only when no optimized path is live, found again on every I/O. When a path becomes live and optimized, every node's current path is found again. Without NUMA keys every path is at the same distance: the first optimized path.",
)
NvmeNuma = policy_class(NUMA, "NvmeNuma", module=__name__)

ROUND_ROBIN = PolicyDef(
    "nvme:round-robin",
    "NVMe iopolicy=round-robin: the next optimized path after the current one",
    "`iopolicy=round-robin`; `nvme_round_robin_path`",
    select=rr_select,
    path_change=rr_path_change,
    fail=head_fail,
    aliases=("nvme:rr",),
    state=(Field("cur", "i8", ("D", MAX_NUMA_NODES), -1),),  # current_path[node]
    setup=_rr_setup,
    config_string=lambda s: _current(s, "round-robin"),
    class_name="NvmeRoundRobin",
    counts="nothing: the current path",
    notes="The next live optimized path after the current one, wrapping; stays on the current path if it is the only optimized one. The paths went live before the run (`nvme_mpath_set_live`), so the current path starts as the first optimized one and the first I/O goes to the next. With only non-optimized paths it takes the *last* one met, so the rotation runs backwards (p0, p2, p1, …). A path that goes down is skipped, not forgotten: the next I/O goes to the path after it (the kernel only disables it); the current path is forgotten when an I/O fails over on it (lost on a path the host saw go down, or aborted at `io_timeout`), and the next I/O then starts from the first optimized path. The cursor is the issuing node's `current_path`, so workloads on different NUMA nodes rotate independently (no distance is compared).",
)
NvmeRoundRobin = policy_class(ROUND_ROBIN, "NvmeRoundRobin", module=__name__)

QUEUE_DEPTH = PolicyDef(
    "nvme:queue-depth",
    "NVMe iopolicy=queue-depth (6.11+): fewest I/Os in flight per controller, shared by all its namespaces",
    "`iopolicy=queue-depth` (kernel 6.11+); `nvme_queue_depth_path`, `nvme_mpath_start_request`",
    select=qd_select,
    aliases=("nvme:qd",),
    state=(per_device("last", init=-1),),
    config_string=_qd_config,
    class_name="NvmeQueueDepth",
    counts="active requests per *controller* (`nr_active`), shared by every namespace on it: `PathView.controller_outstanding`",
    notes="The first path whose controller has the fewest active requests, optimized paths first, returning at once at an optimized path with depth 0. No rotation: ties go to the first path. Assumes every namespace on the controller uses queue-depth too (the kernel's iopolicy is per subsystem).",
)
NvmeQueueDepth = policy_class(QUEUE_DEPTH, "NvmeQueueDepth", module=__name__)
