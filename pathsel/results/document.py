"""The JSON document ``pathsel simulate --json`` prints: its keys, in their order, for the whole comparison and per
run, and :func:`jsonable`, which turns what the results hold into strict JSON's types.

The order of the keys is part of the output (the JSON stays byte for byte the same from one version to the next when
the figures do): a key is added at the end of its object, and only where it applies.
"""

from __future__ import annotations

import math
from typing import Any

from ..version import __version__
from .workloads import workload_json

__all__ = ["jsonable", "run_dict", "result_dict"]


def run_dict(r: Any) -> dict[str, Any]:
    """One run in the JSON contract: :meth:`RunResult.to_dict <pathsel.results.RunResult.to_dict>`, its keys in this order."""
    by_op = {o["op"]: {k: o[k] for k in ("iops", "mbps", "latency_us")} for o in r.ops()}
    d: dict[str, Any] = {
        "policy": r.label,
        "spec": r.policy,
        "iops": r.iops,
        "mbps": r.mbps,
        "latency_us": r.latency_us,
        "ops": by_op,
        "paths": [
            {k: v for k, v in p.items() if k in ("name", "array", "alua", "ios", "share", "iops", "in_flight_mean", "latency_us", "qfull")}
            for p in r.paths()
        ],
        "little": r.little,
        "latency_split_us": r.latency_split_us,
        "queues": r.device_queues(),
        "accounting": r.accounting,
        "faults": r.faults(),
        "links": r.links(),
        "delays": r.delays(),
        "device_config": r.metrics.config_strings,
        "events": jsonable(r.metrics.events),
        "hosts": r.hosts(),
        "devices": r.devices(),
        "workloads": workload_json(r),
    }
    if r.model.cpu is not None:  # only then: a run without a cpu table keeps its JSON byte for byte
        d["cpus"] = r.cpus()
    if not r.ios:
        d["no_io"] = r.no_io_reason()  # and every latency is null
    warned = r.warnings()
    if warned:
        d["warnings"] = warned
    if r.expect_iops is not None:
        d["expected"] = {
            "iops": r.expect_iops,
            "error": r.expectation_error,
            "tolerance": r.expect_tolerance,
            "within_tolerance": abs(r.expectation_error or 0.0) <= r.expect_tolerance,
            "source": r.expect_source,
        }
    return d


def result_dict(result: Any) -> dict[str, Any]:
    """The whole document: :meth:`Result.to_dict <pathsel.results.Result.to_dict>`, its keys in this order."""
    return {
        "pathsel_version": __version__,
        "scenario": result.scenario,
        "source": result.source,
        "engine": result.engine,
        "seed": result.seed,
        "duration_s": result.duration_s,
        "ramp_s": result.ramp_s,
        "runs": [r.to_dict() for r in result.runs],
        "story": [{"policy": label, "sentences": said} for label, said in result.story()],
    }


def jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value
