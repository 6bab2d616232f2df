"""VMware ESXi: ``esxcli storage nmp device list`` and ``esxcli storage core path list`` in, esxcli commands out.

Sources, for the outputs' layout (one block per device or path: a line with
its name, then indented ``Key: Value`` lines) and the settings' words:

* VMware, vSphere Command-Line Interface Concepts and Examples, "Managing
  NMP with esxcli storage nmp" (``esxcli storage nmp device list``,
  ``... device set --psp``, ``... psp fixed deviceconfig set --path``),
  https://vdc-download.vmware.com/vmwb-repository/dcr-public/3b168d66-4960-4290-a39b-6ce5c01edb51/94d96482-6bf6-41ca-8f87-743c9bf4280a/doc/cli_advanced_storage.8.2.html
* VMware, vSphere Storage 6.7, "Change Default Parameters for Latency Round
  Robin" (2018): ``esxcli storage nmp psp roundrobin deviceconfig set
  --type=latency``, ``-S|--num-sampling-cycles``, ``-T|--latency-eval-time``
  and the device config it prints,
  ``{policy=latency,latencyEvalTime=180000,samplingCycles=16,curSamplingCycle=16,useANO=0; CurrentPath=...}``,
  https://docs.vmware.com/en/VMware-vSphere/6.7/com.vmware.vsphere.storage.doc/GUID-1940AE9E-04CF-40BE-BB71-398621F0642E.html
* VMware, vSphere Storage 7.0, "Define NMP SATP Rules" (``esxcli storage
  nmp satp rule add``: ``-s|--satp``, ``-V|--vendor``, ``-M|--model``,
  ``-d|--device``, ``-P|--psp``, ``-O|--psp-option``, ``-c|--claim-option``,
  ``-e|--description``),
  https://docs.vmware.com/en/VMware-vSphere/7.0/com.vmware.vsphere.storage.doc/GUID-D10F7E66-9DF1-4CB7-AAE8-6F3F1F450B42.html
* VMware, vSphere Storage, "Viewing Storage Device Paths" / "Understanding
  Storage Device Naming": runtime names ``vmhbaA:CC:TT:LL``, path UIDs
  ``fc.WWNN:WWPN-fc.WWNN:WWPN-naa...``; the Web Services API's
  ``HostMultipathInfoPath`` for path states (active, standby, disabled, dead).
* Round robin's device config as ESXi prints it for iops
  (``{policy=iops,iops=1000,bytes=10485760,useANO=0; lastPathIndex=...}``;
  ESXi 5.x prints ``policy=rr``): Broadcom KB 371368, "Identify Path
  Selection policy type for round robin" (2025).

What these outputs tell and how pathsel reads it:

* **Paths** are the device's paths, in runtime-name order; a path's name is
  its runtime name. With several devices the LUN becomes ``{lun}``
  (``vmhba1:C0:T0:L{lun}``): pathsel gives every volume a path over every
  initiator-target nexus (adapter, channel, target) to its arrays.
* **ALUA states**: from ``esxcli storage nmp path list`` when given (its
  ``Group State``: active, active unoptimized, standby, unavailable, dead);
  otherwise from the path's ``State`` and the device's ``Working Paths`` and
  ``TPG_state``s: a round robin device's working paths are its AO paths; an
  active path it does not use is ANO when the device reports an ANO target
  port group. A dead or disabled path is written ``unavailable`` (pathsel has
  no path that starts down), with a note.
* **Arrays** are target node names (the FC WWNN, the iSCSI IQN): paths to
  the same node lead to the same array. Two nodes seeing one device are read
  as the two arrays of a metro cluster (stretched, replicated); if they are
  one array's controllers, merge them (the list printed says so).
* **Policies**: ``VMW_PSP_RR`` with ``policy=iops`` (or ``rr``) is
  ``rr:iops=N``, ``policy=bytes`` ``rr:bytes=N``, ``policy=latency``
  ``latency:num_sampling_cycles=..,latency_eval_time=..``, ``useANO=1``
  ``use_ano=1``; ``VMW_PSP_FIXED`` ``fixed:preferred=PATH``; ``VMW_PSP_MRU``
  ``mru``. Local devices (``VMW_SATP_LOCAL``) are skipped.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ...errors import ScenarioError
from ...policies.spec import PolicySpec, parse_spec
from .groups import choose, infer_port_groups, mixed_states, refuse_group_state_clash
from .quoting import comment_text, sh_quote, sh_word
from .skeleton import SkArray, Skeleton, SkPath, SkVolume
from .text import Source, ascii_int, check_name, runtime_key

__all__ = ["import_esxcli", "emit_esxcli", "emit_satp_rule", "read_esxcli_commands", "EsxcliSetting"]

_KEY = re.compile(r"^\s+([A-Za-z][A-Za-z0-9 /()_.-]*?):(?:\s+(.*))?$")
# ASCII digits, at most 9 (\d would take Arabic-Indic digits; a longer number is no adapter, target or LUN ESXi has)
_RUNTIME = re.compile(r"^(vmhba[0-9]{1,9}):C([0-9]{1,9}):T([0-9]{1,9}):L([0-9]{1,9})$")
_NEXUS = re.compile(r"vmhba[0-9]{1,9}:C[0-9]{1,9}:T[0-9]{1,9}")  # a runtime name without its LUN: every device's path
_TPG = re.compile(r"TPG_id=([0-9]+),TPG_state=(\w+)", re.ASCII)
_PATH_TPG = re.compile(r"^\{?TPG_id=([0-9]{1,9}),", re.ASCII)  # nmp path list's Storage Array Type Path Config
DSNRO_RANGE = (1, 256)  # esxcli storage core device set -O: ESXi's range (the schema's sched_num_req_outstanding)
PSPS = {"VMW_PSP_RR": "rr", "VMW_PSP_FIXED": "fixed", "VMW_PSP_MRU": "mru"}
_GROUP_STATE = {
    "active": "AO",
    "active unoptimized": "ANO",
    "standby": "standby",
    "unavailable": "unavailable",
    "dead": None,
    "disabled": None,
    "permanently lost": None,
}


@dataclass
class _Block:
    title: str
    line: int
    fields: dict[str, tuple[str, int]] = field(default_factory=dict)

    def get(self, key: str) -> str | None:
        v = self.fields.get(key)
        return v[0] if v else None

    def need(self, src: Source, key: str, what: str) -> tuple[str, int]:
        if key not in self.fields:
            raise src.fail(self.line, f"{what} {self.title}: no '{key}:' line (is the output cut short?)")
        return self.fields[key]


def _blocks(src: Source, what: str) -> list[_Block]:
    blocks: list[_Block] = []
    for n, raw in enumerate(src.lines, 1):
        if not raw.strip():
            continue
        if not raw[0].isspace():
            blocks.append(_Block(raw.strip(), n))
            continue
        m = _KEY.match(raw)
        if not m:
            raise src.fail(n, f"expected 'Key: Value' under a {what}, got {raw.strip()[:60]!r}")
        if not blocks:
            raise src.fail(n, f"{m.group(1)!r} comes before any {what} name (a line such as 'naa.624a9370...')")
        if m.group(1) in blocks[-1].fields:  # esxcli prints each key once: a second is two captures run together
            first = blocks[-1].fields[m.group(1)][1]
            raise src.fail(n, f"a second '{m.group(1)}:' line for {what} {blocks[-1].title} (the first is line {first})")
        blocks[-1].fields[m.group(1)] = ((m.group(2) or "").strip(), n)
    if not blocks:
        raise src.fail(1, f"no {what}s: not esxcli output")
    return blocks


def _kind_of(src: Source) -> str:
    text = src.text
    if "Device Max Queue Depth:" in text or "No of outstanding IOs with competing worlds:" in text:
        return "core-device"
    if "Path Selection Policy:" in text or "Storage Array Type:" in text:
        return "device"
    if "Group State:" in text:
        return "nmp-path"
    if "Runtime Name:" in text:
        return "core-path"
    return ""


def _braced(src: Source, value: str, line: int, key: str) -> str:
    v = value.strip()
    if not v.startswith("{"):
        return v
    if v.count("{") != v.count("}"):
        raise src.fail(line, f"{key} is cut short (its braces do not close): {v[:60]!r}")
    return v[1:-1]


def _psp_spec(src: Source, dev: _Block) -> str:
    psp, line = dev.need(src, "Path Selection Policy", "device")
    cfg_text, cfg_line = dev.fields.get("Path Selection Policy Device Config", ("", line))
    cfg = _braced(src, cfg_text, cfg_line, "Path Selection Policy Device Config")
    if psp not in PSPS:
        raise src.fail(line, f"Path Selection Policy {psp!r} is not one pathsel models ({', '.join(PSPS)})")
    name = PSPS[psp]
    if name == "mru":
        return "mru"
    if name == "fixed":
        pairs = dict(p.split("=", 1) for p in cfg.split(";") if "=" in p)
        preferred = pairs.get("preferred", "").strip()
        if not preferred:
            return "fixed"
        if not _RUNTIME.match(preferred):  # checked, not pasted: a ',' in it would add a key to the spec
            raise src.fail(cfg_line, f"Path Selection Policy Device Config: preferred={preferred[:60]!r} is not a runtime name vmhbaA:CC:TT:LL")
        return parse_spec("fixed", {"preferred": preferred})[0].text
    head = cfg.split(";", 1)[0]
    pairs = {}
    for item in head.split(","):
        if "=" not in item:
            raise src.fail(cfg_line, f"Path Selection Policy Device Config: {item.strip()!r} is not key=value")
        k, v = item.split("=", 1)
        pairs[k.strip()] = v.strip()
    policy = pairs.get("policy", "")

    def num(key: str) -> str:
        value = pairs.get(key)
        if value is None:
            raise src.fail(cfg_line, f"Path Selection Policy Device Config has no {key}= (is it cut short?)")
        if ascii_int(value) is None:  # ASCII digits only: '²' passes str.isdigit and fails int()
            raise src.fail(cfg_line, f"Path Selection Policy Device Config: {key}={value[:60]!r} is not a whole number")
        return value  # its range is the spec's to check (parse_spec below: a located message)

    use_ano = pairs.get("useANO", "0")
    if use_ano not in ("0", "1", "false", "true"):
        raise src.fail(cfg_line, f"Path Selection Policy Device Config: useANO={use_ano[:60]!r} is not 0 or 1")
    ano = ",use_ano=1" if use_ano in ("1", "true") else ""
    if policy in ("rr", "iops"):
        spec = f"rr:iops={num('iops')}{ano}"
    elif policy == "bytes":
        spec = f"rr:bytes={num('bytes')}{ano}"
    elif policy == "latency":
        spec = f"latency:num_sampling_cycles={num('samplingCycles')},latency_eval_time={num('latencyEvalTime')}{ano}"
    else:
        raise src.fail(cfg_line, f"round robin policy={policy!r} is not iops, bytes or latency")
    try:
        return parse_spec(spec)[0].text
    except ValueError as e:
        raise src.fail(cfg_line, f"Path Selection Policy Device Config: {e}") from None


def _target_node(ident: str) -> str:
    """``fc.WWNN:WWPN`` -> WWNN; ``iqn...,t,1`` -> the IQN; else the identifier."""
    if ident.startswith("fc.") and ":" in ident:
        return ident[3:].split(":", 1)[0]
    return ident.split(",", 1)[0]


def _wwn(hexstr: str) -> str:
    return ":".join(hexstr[i : i + 2] for i in range(0, len(hexstr), 2)) if re.fullmatch(r"[0-9a-fA-F]{16}", hexstr) else hexstr


def import_esxcli(sources: list[Source], host: str = "esxi01", devices: list[str] | None = None) -> Skeleton:
    """A skeleton from ``esxcli storage nmp device list`` plus ``core path list`` (and optionally ``nmp path list``
    and ``core device list``); ``devices``: device names or globs to keep (default: every shared device)."""
    by_kind: dict[str, Source] = {}
    for src in sources:
        kind = _kind_of(src)
        if not kind:
            raise src.fail(1, "not esxcli storage nmp device list, core path list, nmp path list or core device list output")
        if kind in by_kind:
            raise src.fail(1, f"a second {kind.replace('-', ' ')} list (the first is {by_kind[kind].name}): give each once")
        by_kind[kind] = src
    if "device" not in by_kind:
        raise ScenarioError(sources[0].name, "", "needs esxcli storage nmp device list output as well")
    if "core-path" not in by_kind and "nmp-path" not in by_kind:
        raise ScenarioError(by_kind["device"].name, "", "needs esxcli storage core path list (or nmp path list) output as well")
    dsrc = by_kind["device"]
    devs: dict[str, _Block] = {}
    for b in _blocks(dsrc, "device"):
        check_name(dsrc, b.line, "device name", b.title)
        if b.title in devs:  # a second block would silently replace the first one's facts
            raise dsrc.fail(b.line, f"device {b.title} is listed twice (the first is line {devs[b.title].line})")
        devs[b.title] = b
    notes: list[str] = []
    chosen = []
    kept = choose(((name, ()) for name in devs), devices, dsrc.name, "device")
    for name, b in devs.items():
        satp = b.get("Storage Array Type") or ""
        if kept is not None:
            if name in kept:
                chosen.append(name)
        elif satp == "VMW_SATP_LOCAL" or name.startswith("mpx."):
            notes.append(f"skipped local device {name} ({satp or 'mpx'})")
        else:
            chosen.append(name)
    if not chosen:
        raise dsrc.fail(1, "no shared (non-local) device to import")
    specs = {d: _psp_spec(dsrc, devs[d]) for d in chosen}

    # paths: (device, runtime name) -> facts
    paths: dict[tuple[str, str], dict[str, Any]] = {}
    owner: dict[str, tuple[str, Source, int]] = {}  # runtime name -> (device, list, line): the lists must agree
    for kind in ("core-path", "nmp-path"):
        if kind not in by_kind:
            continue
        src = by_kind[kind]
        seen: dict[str, int] = {}  # runtime name -> its line: one path each per list
        for b in _blocks(src, "path"):
            rt, line = b.need(src, "Runtime Name", "path")
            dev, _ = b.need(src, "Device", "path")
            if rt in seen:  # else the second block's device and state would silently replace the first's
                raise src.fail(line, f"runtime name {rt} is listed twice (the first is line {seen[rt]})")
            seen[rt] = line
            if rt in owner and owner[rt][0] != dev:
                first_dev, first_src, first_line = owner[rt]
                raise src.fail(line, f"{rt} is a path of {dev} here but of {first_dev} in {first_src.name} (line {first_line})")
            owner.setdefault(rt, (dev, src, line))
            if dev not in chosen:
                continue
            m = _RUNTIME.match(rt)
            if not m:
                raise src.fail(line, f"runtime name {rt[:60]!r} is not vmhbaA:CC:TT:LL")
            facts = paths.setdefault((dev, rt), {"nexus": m.groups()[:3], "lun": int(m.group(4)), "line": (src, line)})
            if kind == "core-path":
                facts["state"] = b.need(src, "State", "path")[0]
                ident = b.get("Target Identifier")
                if ident is None:
                    raise src.fail(b.line, f"path {rt}: no 'Target Identifier:' line (is the output cut short?)")
                facts["node"] = _target_node(ident)
                facts["target"] = b.get("Target Transport Details") or ident
            else:
                gs, gl = b.need(src, "Group State", "path")
                if gs not in _GROUP_STATE:
                    raise src.fail(gl, f"Group State {gs!r} is not one of {', '.join(_GROUP_STATE)}")
                facts["group"], facts["group_at"] = gs, (src, gl)
                if m_tpg := _PATH_TPG.match(b.get("Storage Array Type Path Config") or ""):
                    facts["tpg"] = str(int(m_tpg.group(1)))
    for d in chosen:
        if not any(dev == d for dev, _ in paths):
            raise dsrc.fail(devs[d].line, f"device {d} has no paths in the path list(s) given")
    refuse_group_state_clash(
        ((dev, f["tpg"], _GROUP_STATE[f["group"]], f["group_at"]) for (dev, _), f in paths.items() if "tpg" in f),
        "device {volume}'s target port group TPG_id={group}",
    )

    # arrays by target node (core path list), else one array
    nodes = list(dict.fromkeys(f.get("node", "") for f in paths.values()))
    arrays = {node: f"array{i + 1}" for i, node in enumerate(nodes)}
    if len(nodes) > 2:
        notes.append(f"{len(nodes)} target node names read as {len(nodes)} arrays: pathsel replicates between two at most")

    # ALUA state per path
    def alua(dev: str, rt: str, f: dict[str, Any]) -> tuple[str, str]:
        b = devs[dev]
        if "group" in f:
            state = _GROUP_STATE[f["group"]]
            return (state, "") if state else ("unavailable", f"{f['group']} in the capture")
        state = f.get("state", "active")
        if state in ("dead", "disabled"):
            return "unavailable", f"{state} in the capture"
        if state == "standby":
            return "standby", ""
        working = [p.strip() for p in (b.get("Working Paths") or "").split(",") if p.strip()]
        tpgs = dict(_TPG.findall(b.get("Storage Array Type Device Config") or ""))
        has_ano = "ANO" in tpgs.values()
        if rt in working or not has_ano:
            return "AO", ""
        if specs[dev].startswith(("rr", "latency")) and "use_ano=1" not in specs[dev]:
            return "ANO", ""
        notes.append(f"{dev}: which active paths are ANO is not in these outputs; {rt} written AO (add esxcli storage nmp path list)")
        return "AO", ""

    # nexus -> (array, state); every device must agree and see every nexus of its arrays
    nexus_of: dict[tuple[str, ...], dict[str, Any]] = {}
    for (dev, rt), f in sorted(paths.items(), key=lambda kv: runtime_key(kv[0][1])):
        state, why = alua(dev, rt, f)
        key = tuple(f["nexus"])
        entry = nexus_of.setdefault(
            key,
            {"array": arrays[f.get("node", "")], "state": state, "why": why, "devs": {}, "per": {}, "target": f.get("target", ""), "rt": rt},
        )
        if why and not entry["why"]:
            entry["state"], entry["why"] = state, why
        if "tpg" in f:
            entry.setdefault("tpg", f["tpg"])
        entry["devs"][dev] = f["lun"]
        entry["per"][dev] = None if why else state  # down: no state to group by
    # LUNs owned by different controllers (one nexus AO for one device, ANO for another): ALUA states are per
    # (device, target port group); the groups come from TPG_id (nmp path list) or the states' pattern (groups.py)
    per_nexus = {k: dict(e["per"]) for k, e in nexus_of.items()}
    tpg = None
    if mixed_states(per_nexus):
        ids = {k: e["tpg"] for k, e in nexus_of.items() if "tpg" in e}
        tpg = infer_port_groups(per_nexus, chosen, ids)
        if len(arrays) > 1:  # alternating owners over two target nodes: one array's controllers, not a metro cluster
            notes.append(
                f"{len(arrays)} target node names ({', '.join(_wwn(n) for n in arrays)}) with LUNs owned alternately: "
                "read as one array's controllers; if they are two arrays of a metro cluster, import the devices one at a time"
            )
            arrays = {node: "array1" for node in arrays}
            for e in nexus_of.values():
                e["array"] = "array1"
        how = "TPG_id (esxcli storage nmp path list)" if len(ids) == len(nexus_of) else "the paths' states over the devices"
        notes.append(
            f"LUNs owned by different controllers: {len(tpg.groups)} target port group(s) from {how}: "
            + ", ".join(f"{g} on controller {c}" for g, c in tpg.controller_of.items())
        )
    for dev in chosen:
        mine = {k for k, e in nexus_of.items() if dev in e["devs"]}
        my_arrays = {nexus_of[k]["array"] for k in mine}
        for k, e in nexus_of.items():
            if e["array"] in my_arrays and k not in mine:
                raise dsrc.fail(
                    devs[dev].line,
                    f"device {dev} is not seen over {k[0]}:C{k[1]}:T{k[2]}, which leads to "
                    f"{e['array']}: pathsel gives a volume a path over every nexus to its arrays; "
                    "import the devices one at a time with --device",
                )
    several = len(chosen) > 1
    sk = Skeleton("esxcli", [s.name for s in sources], host, "scsi")
    for node, name in arrays.items():
        if any(a.name == name for a in sk.arrays):
            continue
        comment = f"target node {_wwn(node)}" if node else "the only array the output names"
        if tpg is not None and len(set(arrays.values())) < len(arrays):
            comment = "target nodes " + ", ".join(_wwn(n) for n in arrays)
        array = SkArray(name, comment)
        if tpg is not None:
            array.controllers, array.port_groups = tpg.controllers, list(tpg.controller_of.items())
        sk.arrays.append(array)
    per_device = several and len(set(specs.values())) > 1  # each device keeps its own PSP: one run is the host as it is
    for dev in chosen:
        lun = Counter(n for e in nexus_of.values() for d, n in e["devs"].items() if d == dev).most_common(1)[0][0]
        dev_arrays = sorted({e["array"] for e in nexus_of.values() if dev in e["devs"]})
        disp = devs[dev].get("Device Display Name") or ""
        vol = SkVolume(dev, lun if several else None, dev_arrays, disp.split(" (")[0])
        if tpg is not None:
            vol.alua, vol.owner = tpg.alua[dev], tpg.owner[dev]
        if per_device:
            vol.policy = specs[dev]
        sk.volumes.append(vol)
    for key, e in sorted(nexus_of.items(), key=lambda kv: runtime_key(kv[1]["rt"])):
        name = f"{key[0]}:C{key[1]}:T{key[2]}:L{{lun}}" if several else e["rt"]
        comment = ", ".join(x for x in (e["target"], e["why"]) if x)
        path_state: str | None = e["state"] if tpg is None else ("unavailable" if e["why"] else None)
        sk.paths.append(SkPath(name, e["array"], path_state, comment=comment, port_group=None if tpg is None else tpg.group_of[key]))
        if e["why"]:
            notes.append(f'{e["rt"]} is {e["why"]}: written alua = "unavailable" (pathsel has no path that starts down)')
    if per_device:
        notes.append("devices with different PSPs: each [[volumes]] entry keeps its own (policy); the scenario runs them together, once")
        sk.policies.append(("", "as imported: per device"))
    else:
        for spec in dict.fromkeys(specs.values()):
            who = [d for d, s in specs.items() if s == spec]
            sk.policies.append((spec, f"as imported: {spec}" + (f" ({len(who)} devices)" if several and len(who) > 1 else "")))
    if "core-device" in by_kind:
        _queue_depths(sk, by_kind["core-device"], chosen, notes)
    satps = sorted({devs[d].get("Storage Array Type") or "" for d in chosen})
    sk.told = [
        f"host {host}: {len(chosen)} device(s) ({', '.join(chosen)}), {len(nexus_of)} path(s), "
        f"{len(arrays)} target node(s); SATP {', '.join(satps)}; PSP config {', '.join(dict.fromkeys(specs.values()))}"
    ]
    if len(arrays) == 2:
        notes.append(
            "two target node names read as the two arrays of a metro cluster (replicated); "
            "if they are one array's controllers, merge the [[arrays]] and drop [replication]"
        )
    sk.detection = "5s"
    sk.detection_note = "FILL IN: time to notice a path going down (ESXi FC sees an RSCN in well under a second)"
    sk.notes = notes
    return sk


def _queue_depths(sk: Skeleton, src: Source, chosen: list[str], notes: list[str]) -> None:
    """``esxcli storage core device list``: each device's ``Device Max Queue Depth`` (DQLEN) and ``No of
    outstanding IOs with competing worlds`` (Disk.SchedNumReqOutstanding, DSNRO, per device since ESXi 5.5) as the
    host's ``queue_depth`` and ``sched_num_req_outstanding`` (pathsel gives every device of a host the same)."""
    blocks: dict[str, _Block] = {}
    for b in _blocks(src, "device"):
        check_name(src, b.line, "device name", b.title)
        if b.title in blocks:
            raise src.fail(b.line, f"device {b.title} is listed twice (the first is line {blocks[b.title].line})")
        blocks[b.title] = b
    found: dict[str, list[tuple[str, int, int]]] = {"Device Max Queue Depth": [], "No of outstanding IOs with competing worlds": []}
    for dev in chosen:
        block = blocks.get(dev)
        if block is None:
            notes.append(f"{dev} is not in {src.name}: its queue depth and DSNRO are not read")
            continue
        for key, rows in found.items():
            if key not in block.fields:
                continue
            text, line = block.fields[key]
            value = ascii_int(text, 1, 65536)
            if value is None:
                raise src.fail(line, f"{key}: {text[:60]!r} is not a whole number in 1..65,536")
            rows.append((dev, value, line))

    def one(rows: list[tuple[str, int, int]], what: str) -> int | None:
        if not rows:
            return None
        values = Counter(v for _, v, _ in rows)
        value = min(values, key=lambda v: (-values[v], v))  # the most common; on a tie the smaller (the tighter cap)
        if len(values) > 1:
            others = ", ".join(f"{d} {v}" for d, v, _ in rows if v != value)
            notes.append(f"{what} differs between devices ({others}): pathsel gives every device of a host one; written {value}")
        return value

    qd = one(found["Device Max Queue Depth"], "Device Max Queue Depth")
    dsnro = one(found["No of outstanding IOs with competing worlds"], "No of outstanding IOs with competing worlds")
    if qd is not None:
        sk.queue_depth = qd
        sk.queue_note = f"Device Max Queue Depth (DQLEN) in {src.name}"
        sk.origins["hosts[0].queue_depth"] = (src.name, found["Device Max Queue Depth"][0][2])
    if dsnro is not None:
        low, high = DSNRO_RANGE
        line = found["No of outstanding IOs with competing worlds"][0][2]
        sk.origins["hosts[0]"] = sk.origins["hosts[0].sched_num_req_outstanding"] = (src.name, line)
        if qd is None:  # the scenario's DSNRO caps a device queue depth, which these blocks do not give
            raise src.fail(
                line,
                "No of outstanding IOs with competing worlds without a Device Max Queue Depth line in any device's block: "
                "DSNRO caps the device queue depth (DQLEN), which pathsel needs with it (is the output cut short?)",
            )
        if qd is not None and dsnro > qd:  # ESXi caps the competing worlds' count at the device's queue depth
            notes.append(f"No of outstanding IOs with competing worlds {dsnro} is more than Device Max Queue Depth {qd}: written {qd}")
            dsnro = qd
        if not low <= dsnro <= high:
            raise src.fail(line, f"No of outstanding IOs with competing worlds: {dsnro} is outside ESXi's range {low}..{high}")
        sk.sched_num_req_outstanding = dsnro


# -- esxcli out ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EsxcliSetting:
    """What esxcli commands (or a SATP rule) set: a spec, and for which device or vendor/model."""

    spec: str
    device: str | None = None
    satp: str | None = None
    vendor: str | None = None
    model: str | None = None
    dsnro: int | None = None  # Disk.SchedNumReqOutstanding the commands set on the device


def _refuse(spec: PolicySpec, where: str) -> ScenarioError:
    family = spec.name.split(":", 1)[0] if ":" in spec.name else "esxi"
    other = {"dm": "multipath.conf", "nvme": "nvme-udev", "mpio": "powershell"}.get(family)
    tail = f"; emit it with --emit {other}" if other else ""
    if spec.name.startswith("hpp:"):
        tail = ": pathsel does not write HPP (esxcli storage hpp) settings; set the scheme in the vSphere Client"
    return ScenarioError("command line", "--emit " + where, f"{spec.text} is not an ESXi NMP policy (rr, latency, fixed, mru){tail}")


def _rr_options(spec: PolicySpec) -> list[str]:
    if spec.name == "latency":
        opts = ["--type=latency", f"--num-sampling-cycles={spec['num_sampling_cycles']}", f"--latency-eval-time={spec['latency_eval_time']}"]
    elif spec["type"] == "bytes":
        opts = ["--type=bytes", f"--bytes={spec['bytes']}"]
    else:
        opts = ["--type=iops", f"--iops={spec['iops']}"]
    if spec["use_ano"]:
        opts.append("--useano=true")
    return opts


def _pathsel_only(spec: PolicySpec) -> list[str]:
    if spec.name != "latency":
        return []
    d = parse_spec("latency")[0]
    changed = [f"{k}={v}" for k, v in spec.params if k in ("variant", "tolerance") and v != d[k]]
    return [f"# {comment_text(', '.join(changed))}: pathsel's reading of how ESXi chooses, not an esxcli setting"] if changed else []


def emit_esxcli(spec: PolicySpec, device: str | None = None, satp: str = "VMW_SATP_ALUA", dsnro: int | None = None) -> str:
    """The esxcli commands that set ``spec`` on ``device``, or as ``satp``'s default PSP without one; ``dsnro``
    also sets the device's Disk.SchedNumReqOutstanding (``esxcli storage core device set -O``, per device since
    ESXi 5.5)."""
    if spec.name not in ("rr", "latency", "fixed", "mru"):
        raise _refuse(spec, "esxcli")
    if dsnro is not None:
        low, high = DSNRO_RANGE
        if isinstance(dsnro, bool) or not isinstance(dsnro, int) or not low <= dsnro <= high:
            raise ScenarioError("command line", "--sched-num-req-outstanding", f"{dsnro!r} is not a whole number in ESXi's range {low}..{high}")
        if device is None:
            raise ScenarioError(
                "command line",
                "--sched-num-req-outstanding",
                "DSNRO is set per device (esxcli storage core device set --device ... --sched-num-req-outstanding N): give --device",
            )
    psp = {"rr": "VMW_PSP_RR", "latency": "VMW_PSP_RR", "fixed": "VMW_PSP_FIXED", "mru": "VMW_PSP_MRU"}[spec.name]
    lines = [f"# pathsel: {comment_text(spec.text)}"] + _pathsel_only(spec)
    if device is None:
        defaults = parse_spec(spec.name)[0]
        if spec.name in ("rr", "latency") and spec.params != defaults.params and spec.text != "latency":
            raise ScenarioError(
                "command line",
                "--emit esxcli",
                f"{spec.text}: a SATP's default PSP takes no PSP options; use --emit satp-rule (with --vendor and --model) or give --device",
            )
        if spec.name == "fixed" and spec["preferred"]:
            raise ScenarioError("command line", "--emit esxcli", "fixed:preferred=... names a path of one device: give --device")
        if spec.name == "latency":
            raise ScenarioError(
                "command line", "--emit esxcli", "latency round robin is a round robin option, not a PSP: use --emit satp-rule or give --device"
            )
        lines.append(f"esxcli storage nmp satp set --satp={sh_quote(satp, '--satp')} --default-psp={psp}")
        return "\n".join(lines) + "\n"
    # every user value quoted for the shell (esxcli's own words are pathsel's and plain)
    dev = sh_quote(device, "--device")
    lines.append(f"esxcli storage nmp device set --device={dev} --psp={psp}")
    if spec.name in ("rr", "latency"):
        lines.append(f"esxcli storage nmp psp roundrobin deviceconfig set --device={dev} " + " ".join(_rr_options(spec)))
    elif spec.name == "fixed" and spec["preferred"]:
        _one_device_path(spec["preferred"])
        path = sh_quote(spec["preferred"], "--policy fixed:preferred")
        lines.append(f"esxcli storage nmp psp fixed deviceconfig set --device={dev} --path={path}")
    if dsnro is not None:  # a whole number checked above: written as digits, never as text given
        lines.append(f"esxcli storage core device set --device={dev} --sched-num-req-outstanding={int(dsnro)}")
    return "\n".join(lines) + "\n"


def _one_device_path(name: str) -> None:
    """esxcli's ``--path`` is one device's path as ESXi prints it: a template (``{lun}``) or a nexus
    (``vmhba2:C0:T0``) names none, and ESXi would refuse the command (issue 48)."""
    if "{" in name or _NEXUS.fullmatch(name):
        raise ScenarioError(
            "command line",
            "--policy fixed:preferred",
            f"{comment_text(name)[:60]!r} is a nexus or a template, not a device's path (vmhbaN:C:T:L): name the device's "
            "path, or emit from the scenario (pathsel simulate FILE --policy ... --emit esxcli), which names each device's path over it",
        )


def emit_satp_rule(
    spec: PolicySpec, device: str | None = None, vendor: str | None = None, model: str | None = None, satp: str = "VMW_SATP_ALUA"
) -> str:
    """``esxcli storage nmp satp rule add``: ``spec`` as the PSP for a vendor/model (or one device)."""
    if spec.name not in ("rr", "latency", "fixed", "mru"):
        raise _refuse(spec, "satp-rule")
    if device is None and not (vendor and model):
        raise ScenarioError(
            "command line",
            "--emit satp-rule",
            "a SATP rule matches a vendor and model: give --vendor and --model (as esxcli storage core device list shows them), or --device",
        )
    if spec.name == "fixed" and satp == "VMW_SATP_ALUA":
        raise ScenarioError(
            "command line",
            "--emit satp-rule",
            "VMW_PSP_FIXED is not a valid PSP in a VMW_SATP_ALUA rule: use --satp VMW_SATP_DEFAULT_AA or --emit esxcli --device",
        )
    if spec.name == "fixed" and spec["preferred"]:
        raise ScenarioError("command line", "--emit satp-rule", "a SATP rule cannot name a preferred path: use --emit esxcli --device")
    option = None
    if spec.name == "rr":
        if spec["type"] == "bytes" or spec["use_ano"]:
            raise ScenarioError(
                "command line",
                "--emit satp-rule",
                f"{spec.text}: pathsel writes SATP rules with iops= or policy=latency PSP options; set bytes and useANO per device with --emit esxcli --device",
            )
        option = f"iops={spec['iops']}"
    elif spec.name == "latency":
        default = parse_spec("latency")[0]
        if any(spec[k] != default[k] for k in ("num_sampling_cycles", "latency_eval_time", "use_ano")):
            raise ScenarioError(
                "command line",
                "--emit satp-rule",
                f"{spec.text}: a SATP rule's PSP option is policy=latency with ESXi's defaults; set the sampling cycles and evaluation time per device with --emit esxcli --device",
            )
        option = "policy=latency"
    psp = {"rr": "VMW_PSP_RR", "latency": "VMW_PSP_RR", "fixed": "VMW_PSP_FIXED", "mru": "VMW_PSP_MRU"}[spec.name]
    parts = ["esxcli storage nmp satp rule add", f"-s {sh_word(satp, '--satp')}"]
    if device is not None:
        parts.append(f"-d {sh_word(device, '--device')}")
    else:
        assert vendor and model  # refused above otherwise
        parts += [f"-V {sh_word(vendor, '--vendor')}", f"-M {sh_word(model, '--model')}"]
    parts.append(f"-P {psp}")
    if option:
        parts.append(f'-O "{option}"')
    if satp == "VMW_SATP_ALUA":
        parts.append("-c tpgs_on")
    parts.append(f"-e {sh_quote(f'pathsel {spec.text}', '--policy')}")
    return "\n".join([f"# pathsel: {comment_text(spec.text)}", *_pathsel_only(spec), " ".join(parts)]) + "\n"


_LONG = {
    "-d": "--device",
    "-P": "--psp",
    "-s": "--satp",
    "-V": "--vendor",
    "-M": "--model",
    "-O": "--psp-option",
    "-c": "--claim-option",
    "-e": "--description",
    "-t": "--type",
    "-I": "--iops",
    "-B": "--bytes",
    "-S": "--num-sampling-cycles",
    "-T": "--latency-eval-time",
    "-U": "--useano",
    "-p": "--path",
}
_LONG_CORE = {"-d": "--device", "-O": "--sched-num-req-outstanding"}  # esxcli storage core device set's own letters


def _options(words: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("--") and "=" in w:
            k, v = w.split("=", 1)
            out[k] = v
        elif w in _LONG or w.startswith("--"):
            out[_LONG.get(w, w)] = words[i + 1] if i + 1 < len(words) else ""
            i += 1
        i += 1
    return out


def read_esxcli_commands(src: Source) -> EsxcliSetting:
    """The setting esxcli commands (``--emit esxcli`` or ``satp-rule``) make: read back for round trips."""
    psp = device = satp = vendor = model = None
    dsnro: int | None = None
    rr: dict[str, str] = {}
    preferred = None
    for n, raw in enumerate(src.lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            words = shlex.split(line)
        except ValueError as e:
            raise src.fail(n, f"not a shell command line ({e})") from None
        if words[:1] != ["esxcli"]:
            raise src.fail(n, f"not an esxcli command: {line[:50]!r}")
        o = _options(words)
        verb = " ".join(w for w in words[1:] if not w.startswith("-"))[:80]
        if verb.startswith("storage nmp device set"):
            psp, device = o.get("--psp"), o.get("--device")
        elif verb.startswith("storage nmp psp roundrobin deviceconfig set"):
            rr = o
        elif verb.startswith("storage nmp psp fixed deviceconfig set"):
            preferred = o.get("--path")
        elif verb.startswith("storage nmp satp set"):
            psp, satp = o.get("--default-psp"), o.get("--satp")
        elif verb.startswith("storage core device set"):
            core = _options([_LONG_CORE.get(w, w) for w in words])
            value = core.get("--sched-num-req-outstanding", "")
            if not re.fullmatch("[0-9]{1,3}", value) or not DSNRO_RANGE[0] <= int(value) <= DSNRO_RANGE[1]:
                raise src.fail(n, f"--sched-num-req-outstanding={value[:40]!r} is not a whole number in 1..256")
            dsnro = int(value)
        elif verb.startswith("storage nmp satp rule add"):
            psp, satp, device, vendor, model = o.get("--psp"), o.get("--satp"), o.get("--device"), o.get("--vendor"), o.get("--model")
            opt = o.get("--psp-option", "")
            for item in filter(None, opt.split(";")):
                k, _, v = item.partition("=")
                if k == "policy" and v == "latency":
                    rr["--type"] = "latency"
                elif k == "iops":
                    rr.update({"--type": "iops", "--iops": v})
        else:
            raise src.fail(n, f"not an esxcli command pathsel writes: {line[:60]!r}")
    if psp not in PSPS:
        raise src.fail(None, f"sets no PSP pathsel models (got {psp!r})")
    name = PSPS[psp]
    for key in ("--iops", "--bytes", "--num-sampling-cycles", "--latency-eval-time"):
        if key in rr and not re.fullmatch("[0-9]{1,12}", rr[key]):  # pasted into a spec's text below: digits only
            raise src.fail(None, f"{key}={rr[key][:40]!r} is not a whole number")
    if name == "rr":
        kind = rr.get("--type", "iops")
        ano = ",use_ano=1" if rr.get("--useano", "false").lower() in ("true", "1") else ""
        if kind == "latency":
            keys = [f"num_sampling_cycles={rr['--num-sampling-cycles']}"] if "--num-sampling-cycles" in rr else []
            keys += [f"latency_eval_time={rr['--latency-eval-time']}"] if "--latency-eval-time" in rr else []
            keys += ["use_ano=1"] if ano else []
            text = "latency" + (":" + ",".join(keys) if keys else "")
        elif kind == "bytes":
            text = f"rr:bytes={rr.get('--bytes', '10485760')}{ano}"
        else:
            text = f"rr:iops={rr.get('--iops', '1000')}{ano}"
    else:
        text = name
    try:
        # the preferred path as a parameter, not pasted into the spec's text: a path name may hold "," or "="
        spec = parse_spec(text, {"preferred": preferred} if name == "fixed" and preferred else None)[0]
    except ValueError as e:
        raise src.fail(None, f"sets no policy pathsel reads: {e}") from None
    return EsxcliSetting(spec.text, device, satp, vendor, model, dsnro)
