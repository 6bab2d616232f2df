"""Results: the comparison of a run's policies, as numbers, tidy DataFrames, JSON and a table.

``Result`` holds one :class:`RunResult` per compared policy. DataFrames are in
long (tidy) form so ``groupby`` and ``plotly.express`` work directly:
``summary()`` one row per policy; ``ops()`` one row per policy x op (read,
write), as fio reports them; ``paths()`` one row per policy x path;
``timeseries()`` one row per policy x interval (``path_share()`` per path);
``events()`` one row per policy event or fault.

Text tables (``table()``, ``paths_table()``) give every time in one unit, ms,
named in each column's header.

:class:`Result` is here, with its DataFrames; one policy's run, :class:`RunResult`, is in :mod:`.run`, the text
tables in :mod:`.tables`, the JSON document in :mod:`.document`, the words in :mod:`.story`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import tables
from .document import jsonable, result_dict
from .run import RunResult
from .story import story
from .used import used_paths

if TYPE_CHECKING:
    import pandas as pd  # imported by each method that makes a DataFrame: pathsel simulate prints without pandas

# RunResult and jsonable: their homes are run.py and document.py; named here too for code that imports them from here
__all__ = ["Result", "RunResult", "jsonable"]


@dataclass
class Result:
    """The comparison: one RunResult per policy, all on the same scenario and seed."""

    scenario: str
    source: str
    engine: str
    seed: int
    duration_s: float
    ramp_s: float
    runs: list[RunResult] = field(default_factory=list)
    config: Any = None  # the validated scenario (ScenarioModel) the runs came from, for describing the set-up

    def __getitem__(self, label: str) -> RunResult:
        for r in self.runs:
            if r.label == label or r.policy == label:
                return r
        raise KeyError(label)

    def summary(self) -> pd.DataFrame:
        """One row per policy: IOPS, MB/s, latency percentiles (us), paths used (>= 0.5 % of their device's I/Os), the file's expected IOPS."""
        import pandas as pd

        rows = []
        for r in self.runs:
            lat = r.latency_us
            rows.append(
                {
                    "policy": r.label,
                    "iops": r.iops,
                    "mbps": r.mbps,
                    "mean_us": lat["mean"],
                    "p50_us": lat["p50"],
                    "p99_us": lat["p99"],
                    "p999_us": lat["p999"],
                    "max_us": lat["max"],
                    "paths_used": len(used_paths(r)),  # >= 0.5 % of its device's I/Os (results/used.py)
                    "expected_iops": r.expect_iops,
                }
            )
        return pd.DataFrame(rows)

    def ops(self) -> pd.DataFrame:
        """One row per policy x op that ran (read, write): the summary's columns, per op, as fio prints them."""
        import pandas as pd

        rows = []
        for r in self.runs:
            for o in r.ops():
                lat = o["latency_us"]
                rows.append(
                    {
                        "policy": r.label,
                        "op": o["op"],
                        "ios": o["ios"],
                        "iops": o["iops"],
                        "mbps": o["mbps"],
                        "mean_us": lat["mean"],
                        "p50_us": lat["p50"],
                        "p99_us": lat["p99"],
                        "p999_us": lat["p999"],
                        "max_us": lat["max"],
                    }
                )
        return pd.DataFrame(rows, columns=["policy", "op", "ios", "iops", "mbps", "mean_us", "p50_us", "p99_us", "p999_us", "max_us"])

    def paths(self) -> pd.DataFrame:
        """One row per policy x path: host, device, array, ALUA state, I/Os, share, IOPS, latency (us), I/Os in flight."""
        import pandas as pd

        rows = []
        for r in self.runs:
            for p in r.paths():
                rows.append(
                    {
                        "policy": r.label,
                        "path": p["name"],
                        "host": p["host"],
                        "device": p["device"],
                        "array": p["array"],
                        "alua": p["alua"],
                        "ios": p["ios"],
                        "share": p["share"],
                        "iops": p["iops"],
                        "mean_us": p["latency_us"]["mean"],
                        "p50_us": p["latency_us"]["p50"],
                        "p99_us": p["latency_us"]["p99"],
                        "in_flight_mean": p["in_flight_mean"],
                    }
                )
        return pd.DataFrame(rows)

    def hosts(self) -> pd.DataFrame:
        """One row per policy x host: paths, paths used, I/Os, share, IOPS, MB/s, latency on its paths (us), I/Os in flight."""
        return self._groups("host", ["host"])

    def devices(self) -> pd.DataFrame:
        """One row per policy x device (one host's view of one volume): as :meth:`hosts`, with device and volume."""
        own = any(d.policy is not None for r in self.runs for d in r.model.devices)  # a policy per device: its spec
        return self._groups("device", ["host", "device", "volume", *(["spec"] if own else [])])

    def workloads(self) -> pd.DataFrame:
        """One row per policy x workload (a VM or fio job) x op (``all``, then each op it ran): IOPS, MB/s, GAVG, KAVG,
        DAVG (us), ACTV, QUED and latency percentiles (us) as the VM sees them (:mod:`pathsel.results.workloads`)."""
        import pandas as pd

        from .workloads import COLUMNS

        rows = [{"policy": r.label, **w} for r in self.runs for w in r.workloads()]
        return pd.DataFrame(rows, columns=["policy", *COLUMNS])

    def workloads_table(self) -> str:
        """Per policy and workload (a VM or fio job), as esxtop's VM disk view: IOPS, MB/s, GAVG, KAVG, DAVG, ACTV,
        QUED, p50, p99, p99.9; a row per op beneath a workload that both reads and writes. Times in ms."""
        return tables.workloads_table(self)

    def _groups(self, by: str, names: list[str]) -> pd.DataFrame:
        import pandas as pd

        from .breakdown import COLUMNS, groups

        rows = []
        for r in self.runs:
            for g in groups(r, by):
                lat = g.pop("latency_us")
                rows.append({"policy": r.label, **g, **{f"{k}_us": v for k, v in lat.items()}})
        return pd.DataFrame(rows, columns=["policy", *names, *COLUMNS])

    def breakdown_table(self, by: str) -> str:
        """Per policy and host, device, op or workload (``by``), as text; times in ms."""
        return tables.breakdown_table(self, by)

    def timeseries(self) -> pd.DataFrame:
        """One row per policy x interval: IOPS, MB/s, latency and failed I/Os; ``in_window`` marks the measured rows."""
        import pandas as pd

        return pd.concat([r.timeseries() for r in self.runs], ignore_index=True)

    def path_share(self) -> pd.DataFrame:
        """One row per policy x interval x path: I/Os completed and their share of the interval's I/Os."""
        import pandas as pd

        return pd.concat([r.path_share() for r in self.runs], ignore_index=True)

    def events(self) -> pd.DataFrame:
        """One row per policy event or fault, with the host of the device it happened on ("" for a fault)."""
        import pandas as pd

        rows = []
        for r in self.runs:
            host_of = {d.name: r.model.hosts[d.host] for d in r.model.devices}
            rows += [{"policy": r.label, "host": host_of.get(e.get("device", ""), ""), **e} for e in r.metrics.events]
        return pd.DataFrame(rows)

    def cpus(self) -> pd.DataFrame:
        """One row per policy x core of every host with a cpu table: host, core, NUMA node, utilisation (:mod:`.cpu`)."""
        import pandas as pd

        from .cpu import cpu_rows

        rows = [{"policy": r.label, **c} for r in self.runs for c in cpu_rows(r)]
        return pd.DataFrame(rows, columns=["policy", "host", "core", "node", "utilisation"])

    def faults(self) -> pd.DataFrame:
        """One row per policy x scenario fault: recovery time, longest stall (over every I/O outstanding during
        it), I/Os of 100 ms or more and the VMs they froze, errors."""
        import pandas as pd

        rows = [{"policy": r.label, **f, "frozen": ", ".join(w["workload"] for w in f["frozen"])} for r in self.runs for f in r.faults()]
        cols = ["policy", "at_s", "what", "target", "iops_before", "recovery_s", "max_stall_ms", "stalled_ios", "frozen", "errors"]
        return pd.DataFrame(rows, columns=cols)

    def links(self) -> pd.DataFrame:
        """One row per policy x wire x direction: utilisation and mean queueing wait."""
        import pandas as pd

        rows = [{"policy": r.label, **w} for r in self.runs for w in r.links()]
        framed = ["payload_mb_s", "payload_share"] if any("payload_mb_s" in w for w in rows) else []  # a transport (issue 33)
        held = ["held"] if any("held" in w for w in rows) else []  # the fabric (issue 33): back-pressure's share of the window
        return pd.DataFrame(rows, columns=["policy", "name", "kind", "direction", "frames", "utilisation", "queue_wait_us", *framed, *held])

    def delays(self) -> pd.DataFrame:
        """Every distinct input delay with its given (input_*) and modelled (model_*) quantiles."""
        import pandas as pd

        rows = self.runs[0].delays() if self.runs else []
        return pd.DataFrame([{**r, "used_by": ", ".join(r["used_by"])} for r in rows])

    def accounting(self) -> pd.DataFrame:
        """One row per policy: issued = completed + failed + in flight at the end."""
        import pandas as pd

        return pd.DataFrame([{"policy": r.label, **r.accounting} for r in self.runs])

    def to_dict(self) -> dict[str, Any]:
        """The JSON document ``pathsel simulate --json`` prints, as Python objects."""
        return result_dict(self)

    def to_json(self, indent: int | None = 2) -> str:
        """The JSON document ``pathsel simulate --json`` prints (strict JSON: no NaN, no Infinity)."""
        return json.dumps(jsonable(self.to_dict()), indent=indent, allow_nan=False)  # strict JSON: no NaN, no Infinity

    def story(self) -> list[tuple[str | None, list[str]]]:
        """What happened, in words (:func:`pathsel.results.story.story`): an overview, then sentences per policy."""
        return story(self)

    def table(self) -> str:
        """The comparison a person reads: one row per policy, and for a mix of reads and writes one row per op
        beneath it (as fio prints read and write apart). Times in ms."""
        return tables.table(self)

    def paths_table(self) -> str:
        """One row per policy and path: I/Os, share, IOPS, mean I/Os in flight, latency on the path (ms)."""
        return tables.paths_table(self)
