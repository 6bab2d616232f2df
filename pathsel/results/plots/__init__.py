"""Figures of a run, as ``plotly.graph_objects.Figure`` objects.

Every function takes a :class:`~pathsel.results.Result` (all its policies) or
one :class:`~pathsel.results.RunResult` and returns a figure to ``show()``,
save (``write_html``) or restyle; nothing is drawn as a side effect.

* :func:`topology`: the set-up (hosts, adapters, the fabric's switches, ISLs
  and links with their busy and held shares, target ports boxed by
  controller, arrays, replication), paths coloured by ALUA state per LUN and
  as wide as each policy's share, compact from 32 hosts; :func:`key_figures`
  lists the scenario's figures beside it.
* :func:`timeline`: IOPS and mean latency per interval, one line per policy,
  with path faults (vertical lines) and latency round robin evaluations
  (diamonds) marked.
* :func:`latency_percentiles`: p50, p99 and p99.9 per policy, as bars.
* :func:`latency_cdf`: the distribution of I/O latency per policy, from the
  run's latency histogram (every measured I/O, not a sample).
* :func:`path_share_heatmap`: share of each interval's I/Os per path (path x
  time), with each path's ALUA state and up/down state as a timeline below.
* :func:`compare_seeds`: each policy's mean IOPS and p99 latency over
  seeds with 95 % confidence intervals, from :func:`pathsel.simulate_seeds`
  (plots draw results; they never simulate); :func:`regret_heatmap` and
  :func:`load_latency` draw a sweep's table.
* :func:`cpu_heatmap`: each host core's utilisation per policy;
  :func:`link_utilisation`: each wire's utilisation and back-pressure.

Latencies are drawn in milliseconds; times in seconds from the start of the
run, the ramp included (shaded).

The figures live by what they show: :mod:`.over_time` (IOPS and latency
over time), :mod:`.latency` (percentiles, CDF), :mod:`.per_path` (share and
state per path), :mod:`.studies` (across seeds, sweeps, offered load),
:mod:`.resources` (host CPU, wires), :mod:`.common` (what they share: each
policy's colour, dash and marker); the set-up drawing is
:mod:`pathsel.results.topology`. This package gathers their public names.
"""

from __future__ import annotations

from ..topology.figure import topology
from ..topology.key_table import key_figures
from .latency import latency_cdf, latency_percentiles
from .over_time import FAULT_EVENTS, timeline
from .per_path import GROUP_ABOVE, STATES, path_share_heatmap, path_states
from .resources import cpu_heatmap, link_utilisation, wire_rows
from .studies import compare_seeds, load_latency, regret_heatmap

# in the order the reference page lists them (docs/api/plots.md: members_order __all__): the set-up, then as the report
__all__ = [
    "topology",
    "key_figures",
    "timeline",
    "latency_percentiles",
    "latency_cdf",
    "path_states",
    "path_share_heatmap",
    "compare_seeds",
    "regret_heatmap",
    "load_latency",
    "cpu_heatmap",
    "wire_rows",
    "link_utilisation",
    "GROUP_ABOVE",
    "FAULT_EVENTS",
    "STATES",
]
