"""The ``[[faults]]`` section's checks across sections: what each kind of fault needs and takes (a path, a link, an
array, a state, a volume or port group, a controller), and that the names it gives are the scenario's.
"""

from __future__ import annotations

from typing import Any

from ..names import HostNames, path_names, unknown_path
from ..schema import ScenarioModel
from .arrays import unknown_controller
from .base import CrossCheck, guess

__all__ = ["check_faults"]


def check_faults(r: CrossCheck) -> None:
    """Each fault's keys and the names it gives."""
    m, fail, arrays = r.m, r.fail, r.arrays
    links = [ln.name for ln in m.links]
    runtime: list[dict[str, HostNames]] = []

    def runtime_names() -> dict[str, HostNames]:
        """Every name each host's paths answer to, worked out once and only when a fault names a path."""
        if not runtime:
            runtime.append(path_names(m))
        return runtime[0]

    needs = {
        "path_down": "path",
        "path_up": "path",
        "alua": "path",
        "latency": "path or link",
        "loss": "path or link",
        "array_down": "array",
        "array_up": "array",
        "replication_down": "",
        "replication_up": "",
        "owner": "",
        "slow_drain": "link",
    }
    for i, f in enumerate(m.faults):
        at = f"faults[{i}]"
        need = needs[f.what]
        by_volume = f.what == "alua" and (f.volume is not None or f.port_group is not None)
        if need == "path" and f.path is None and not by_volume:
            fail(f"{at}.path", f"{f.what} needs the path it happens to" + (" (or a volume or port_group)" if f.what == "alua" else ""))
        if need == "path or link" and (f.path is None) == (f.link is None):
            fail(f"{at}.path", f'{f.what} needs exactly one of path or link (a [[links]] name or "replication")')
        if need == "link" and (f.link is None or f.link == "replication"):
            fail(f"{at}.link", f"{f.what} needs the [[links]] link whose port drains slowly (one with bb_credits)")
        if need == "array" and f.array is None:
            fail(f"{at}.array", f"{f.what} needs the array it happens to")
        if f.path is not None and need not in ("path", "path or link"):
            fail(f"{at}.path", f"{f.what} does not take a path")
        if f.link is not None and need not in ("path or link", "link"):
            fail(f"{at}.link", f"{f.what} does not take a link")
        if f.array is not None and need != "array":
            fail(f"{at}.array", f"{f.what} does not take an array")
        if f.path is not None:
            host = r.host_of("faults", i, f.host)
            if host is not None:
                # a device's path as the host prints it, its nexus, or the template as written (issue 48)
                known = runtime_names().get(host)
                if known is not None and known.group(f.path) is None:
                    fail(f"{at}.path", unknown_path(f.path, host, known))
        if f.link is not None and f.link != "replication" and f.link not in links:
            fail(f"{at}.link", f"no link named {f.link!r} (links: {', '.join(['replication', *links])})")
        if f.link == "replication" and m.replication is None and need != "link":
            fail(f"{at}.link", "there is no [replication] section")
        if f.array is not None and f.array not in arrays:
            fail(f"{at}.array", f"no array named {f.array!r} (arrays: {', '.join(arrays)})")
        if f.what.startswith("replication") and m.replication is None:
            fail(f"{at}.what", f"{f.what} needs a [replication] section")
        if f.what == "alua" and f.state is None:
            fail(f"{at}.state", "an alua change needs the new state (AO, ANO, standby, unavailable or transitioning)")
        if f.what != "alua" and f.state is not None:
            fail(f"{at}.state", f"only an alua change takes a state, not {f.what}")
        if f.what == "latency" and f.add is None:
            fail(f"{at}.add", 'a latency step needs add (the one-way delay to add, e.g. "5ms")')
        if f.what != "latency" and f.add is not None:
            fail(f"{at}.add", f"only a latency step takes add, not {f.what}")
        if f.what == "loss" and f.ppm is None:
            fail(f"{at}.ppm", "a loss burst needs ppm (frames lost per million)")
        if f.what != "loss" and f.ppm is not None:
            fail(f"{at}.ppm", f"only a loss burst takes ppm, not {f.what}")
        if f.loss_ops is not None and f.what != "loss":
            fail(f"{at}.loss_ops", f"only a loss burst takes loss_ops, not {f.what}")
        elif f.loss_ops is not None and f.ppm == 0:  # as on a path or link: the key would say nothing
            fail(f"{at}.loss_ops", f'loss_ops = "{f.loss_ops}" says whose frames ppm drops, but ppm is 0 here')
        elif f.loss_ops is not None and f.link == "replication":
            fail(f"{at}.loss_ops", "only writes cross the replication link (their mirror copies): drop loss_ops")
        if f.duration is not None and f.what not in ("latency", "loss", "slow_drain"):
            fail(f"{at}.duration", f"only a latency step, a loss burst or a slow drain takes a duration, not {f.what}")
        r.problems.extend(_check_slow_drain(m, i, f))
        r.problems.extend(_check_group_fault(m, i, f))


def _check_slow_drain(m: ScenarioModel, i: int, f: Any) -> list[tuple[str, str]]:
    """A slow_drain fault: on a link with bb_credits; credit_return or stop (which needs a duration)."""
    at = f"faults[{i}]"
    if f.what != "slow_drain":
        for key in ("credit_return", "stop"):
            if getattr(f, key) is not None:
                return [(f"{at}.{key}", f"only a slow_drain fault takes {key}, not {f.what}")]
        return []
    link = next((ln for ln in m.links if ln.name == f.link), None)
    if link is not None and link.bb_credits is None:
        return [(f"{at}.link", f"link {f.link!r} has no bb_credits: a slow drain is credits returned late (give the link bb_credits)")]
    if (f.credit_return is None) == (not f.stop):
        return [(f"{at}.credit_return", 'a slow_drain needs exactly one of credit_return (e.g. "1ms") or stop = true')]
    if f.stop and f.duration is None:
        return [(f"{at}.duration", "a stopped port drains again only when the fault reverts: give the stop a duration")]
    return []


def _check_group_fault(m: ScenarioModel, i: int, f: Any) -> list[tuple[str, str]]:
    """An alua change naming a volume or a port group; an owner change (issue 32)."""
    problems: list[tuple[str, str]] = []
    at = f"faults[{i}]"
    volumes = [v.name for v in m.volumes]
    groups = sorted({n for a in m.arrays for n, _ in a.groups()})
    if f.volume is not None and f.what not in ("alua", "owner"):
        problems.append((f"{at}.volume", f"only an alua or owner change takes a volume, not {f.what}"))
    if f.port_group is not None and f.what != "alua":
        problems.append((f"{at}.port_group", f"only an alua change takes a port_group, not {f.what}"))
    if f.controller is not None and f.what != "owner":
        problems.append((f"{at}.controller", f"only an owner change takes a controller, not {f.what}"))
    if f.volume is not None and f.volume not in volumes:
        listed = "volumes: " + ", ".join(volumes) if volumes else "no [[volumes]] section"
        problems.append((f"{at}.volume", f"no volume named {f.volume!r} ({listed}){guess(f.volume, volumes)}"))
    if f.port_group is not None and f.port_group not in groups:
        listed = "groups: " + ", ".join(groups) if groups else "no array has controllers"
        problems.append((f"{at}.port_group", f"no target port group {f.port_group!r} ({listed}){guess(f.port_group, groups)}"))
    if f.what == "owner":
        if f.volume is None:
            problems.append((f"{at}.volume", "an owner change needs the volume that moves"))
        if f.controller is None:
            problems.append((f"{at}.controller", "an owner change needs the controller that owns the volume from now on"))
        if f.path is not None:
            problems.append((f"{at}.path", "an owner change takes a volume and a controller, not a path"))
        vol = next((v for v in m.volumes if v.name == f.volume), None)
        if vol is not None and f.controller is not None:
            held = [a for a in m.arrays if a.controllers and (vol.arrays is None or a.name in vol.arrays)]
            if not held:
                problems.append((f"{at}.volume", f"volume {vol.name!r} is on no array with controllers: nothing owns it"))
            problems.extend(unknown_controller(f"{at}.controller", f.controller, held))
    return problems
