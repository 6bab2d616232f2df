"""Windows MPIO (Microsoft DSM): ``mpclaim -s -d`` in, PowerShell and ``mpclaim -l`` out.

Sources:

* Microsoft, "Microsoft Multipath I/O (MPIO) User's Guide for Windows
  Server 2012", Bruce Langworthy, 2012 (mpclaim: ``-s -d`` lists the MPIO
  disks and their load-balance policy, ``-s -d N`` one disk's paths: path
  ID, state, SCSI address port|bus|target|LUN, weight; ``-l -d N P`` sets
  disk N's policy, ``-l -m P`` MSDSM's default; P: 1 Fail Over Only, 2
  Round Robin, 3 Round Robin with Subset, 4 Least Queue Depth, 5 Weighted
  Paths, 6 Least Blocks), and ``mpclaim.exe``'s usage text (``mpclaim /?``).
* Microsoft, "Set-MSDSMGlobalDefaultLoadBalancePolicy" (MPIO PowerShell
  module, Windows Server 2012 and later): ``-Policy`` None, FOO, RR, LQD, LB,
  https://learn.microsoft.com/en-us/powershell/module/mpio/set-msdsmglobaldefaultloadbalancepolicy
* Microsoft, "MPIO Policies" (2009), for what each policy does
  (:mod:`pathsel.policies.mpio`).

How pathsel reads ``mpclaim -s -d N``: each ``MPIO DiskN: NN Paths, POLICY,
ALUA-MODE`` block is a volume; each path line ``PATHID STATE
PORT|BUS|TARGET|LUN WEIGHT`` a path named by its path ID (MSDSM gives the
same ID to every LUN over one I_T nexus); ``Active/Optimized`` is AO,
``Active/Unoptimized`` ANO, ``Standby`` standby, ``Unavailable`` and
``Failed`` unavailable; the weight is the path's ``weight``. The output does
not tell which array a target port belongs to: one array.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...errors import ScenarioError
from ...policies.spec import PolicySpec, parse_spec
from .groups import choose, infer_port_groups, mixed_states, refuse_group_state_clash
from .quoting import comment_text, ps_split, shown
from .skeleton import SkArray, Skeleton, SkPath, SkVolume
from .text import Source, ascii_int

__all__ = ["import_mpclaim", "emit_powershell", "read_powershell", "MpioSetting", "POLICY_NAMES", "POLICY_NUMBERS"]

# mpclaim's long names and short names -> pathsel spec
POLICY_NAMES = {
    "Fail Over Only": "mpio:fo",
    "Round Robin": "mpio:rr",
    "Round Robin with Subset": "mpio:rrws",
    "Least Queue Depth": "mpio:lqd",
    "Weighted Paths": "mpio:wp",
    "Least Blocks": "mpio:lb",
}
SHORT = {"FOO": "mpio:fo", "RR": "mpio:rr", "RRWS": "mpio:rrws", "LQD": "mpio:lqd", "WP": "mpio:wp", "LB": "mpio:lb"}
POLICY_NUMBERS = {"mpio:fo": 1, "mpio:rr": 2, "mpio:rrws": 3, "mpio:lqd": 4, "mpio:wp": 5, "mpio:lb": 6}
_STATES = {
    "Active/Optimized": "AO",
    "Active/Unoptimized": "ANO",
    "Standby": "standby",
    "Unavailable": "unavailable",
    "Failed": None,
    "Transitioning": "transitioning",
}
# re.ASCII and bounded digits: \d would take Arabic-Indic digits, and no disk, path count, address or weight is longer
_DISK = re.compile(r"^MPIO Disk(?P<n>[0-9]{1,9}): (?P<paths>[0-9]{1,9}) Paths?, (?P<policy>[^,]+)(?:, (?P<alua>.*))?$", re.ASCII)
_PATH = re.compile(
    r"^\s*(?P<id>[0-9a-fA-F]{16})\s+(?P<state>\S+)\s+(?P<addr>[0-9]{1,9}\|[0-9]{1,9}\|[0-9]{1,9}\|[0-9]{1,9})\s+(?P<weight>[0-9]+)\s*$", re.ASCII
)
# matched against a stripped line: (?P<dsm>.+) to the end, not .+?\s*$, which retries \s* at every character
_SUMMARY = re.compile(r"^MPIO Disk(?P<n>[0-9]{1,9})\s+(?P<system>Disk [0-9]{1,9})\s+(?P<lb>\S+)\s+(?P<dsm>.+)$", re.ASCII)
# the line under a path that names its target port group (mpclaim -s -d N on an ALUA disk)
_TPG_LINE = re.compile(r"^TPG_State\s*:\s*(?P<state>[A-Za-z/]+)\s*,\s*TPG_Id:\s*(?P<id>[0-9]{1,9})\b", re.ASCII)
_WEIGHT_MAX = 2**31 - 1  # the scenario's path weight is an int32 (pathsel.limits.MAX_INT32)


def _details(src: Source) -> list[dict[str, Any]]:
    disks: list[dict[str, Any]] = []
    for n, raw in enumerate(src.lines, 1):
        line = raw.rstrip()
        if m := _DISK.match(line.strip()):
            policy = m.group("policy").strip()
            if policy not in POLICY_NAMES:
                raise src.fail(n, f"load balance policy {policy[:60]!r} is not one pathsel models ({', '.join(POLICY_NAMES)})")
            if int(m.group("paths")) == 0:
                raise src.fail(n, f"MPIO Disk{int(m.group('n'))} has no paths: pathsel needs at least one")
            disks.append(
                {
                    "n": int(m.group("n")),
                    "count": int(m.group("paths")),
                    "policy": POLICY_NAMES[policy],
                    "alua": (m.group("alua") or "").strip(),
                    "line": n,
                    "paths": [],
                    "seen": {},
                    "sn": "",
                }
            )
            continue
        if p := _PATH.match(line):
            if not disks:
                raise src.fail(n, "a path line before any 'MPIO DiskN: NN Paths, POLICY' line")
            state = p.group("state")
            if state not in _STATES:
                raise src.fail(n, f"path state {state[:60]!r} is not one of {', '.join(_STATES)}")
            if ascii_int(p.group("weight"), 0, _WEIGHT_MAX) is None:
                raise src.fail(n, f"path weight {p.group('weight')[:60]} is more than {_WEIGHT_MAX:,}")
            seen = disks[-1]["seen"]  # one disk lists each path once, one path per I_T nexus
            for key in (p.group("id").lower(), p.group("addr").rsplit("|", 1)[0]):
                if key in seen:
                    raise src.fail(
                        n, f"MPIO Disk{disks[-1]['n']} lists path {p.group('id')} ({p.group('addr')}) twice (the first is line {seen[key]})"
                    )
                seen[key] = n
            disks[-1]["paths"].append({**p.groupdict(), "line": n})
            continue
        stripped = line.strip()
        if (t := _TPG_LINE.match(stripped)) and disks and disks[-1]["paths"]:
            disks[-1]["paths"][-1]["tpg"] = str(int(t.group("id")))
            continue
        if re.match(r"MPIO Disk\S*:", stripped):  # a disk line _DISK does not read (a count such as '²'): never skipped
            raise src.fail(n, f"expected a disk line such as 'MPIO Disk0: 04 Paths, Round Robin with Subset, Implicit Only', got {stripped[:60]!r}")
        if disks and stripped.startswith("SN:"):
            disks[-1]["sn"] = stripped[3:].strip()
        elif re.match(r"^[0-9a-fA-F]{16}\b", stripped):
            raise src.fail(n, f"expected a path line such as '0000000077030001 Active/Optimized   003|000|001|000   0', got {stripped[:60]!r}")
    for d in disks:
        if len(d["paths"]) != d["count"]:
            raise src.fail(d["line"], f"MPIO Disk{d['n']} says {d['count']} paths but lists {len(d['paths'])} (is the output cut short?)")
    return disks


def _summary(src: Source) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    for n, raw in enumerate(src.lines, 1):
        if m := _SUMMARY.match(raw.strip()):
            lb = m.group("lb")
            if lb not in SHORT and lb != "VS":
                raise src.fail(n, f"LB Policy {lb!r} is not one of {', '.join(SHORT)}")
            out[int(m.group("n"))] = {"system": m.group("system"), "lb": lb, "dsm": m.group("dsm"), "line": n}
    if not out:
        raise src.fail(1, "no 'MPIO DiskN  Disk M  POLICY  DSM' lines: not mpclaim -s -d output")
    return out


def import_mpclaim(sources: list[Source], host: str = "windows01", devices: list[str] | None = None) -> Skeleton:
    """A skeleton from ``mpclaim -s -d N`` outputs (and the ``mpclaim -s -d`` summary); ``devices``: the MPIO disks
    to keep (``MPIO Disk1``, ``Disk1`` or ``1``; globs)."""
    details: list[Source] = []
    summaries: list[Source] = []
    for s in sources:
        (details if re.search(r"^\s*MPIO Disk\d+: ", s.text, re.M) else summaries).append(s)
    if not details:
        raise ScenarioError(sources[0].name, "", "needs the paths of each disk: mpclaim -s -d N output (one per MPIO disk)")
    if len(summaries) > 1:
        raise ScenarioError(summaries[1].name, "", "give one mpclaim -s -d summary")
    summary = _summary(summaries[0]) if summaries else {}
    disks: list[tuple[Source, dict[str, Any]]] = []
    for src in details:
        for d in _details(src):
            if any(d["n"] == e["n"] for _, e in disks):
                raise src.fail(d["line"], f"MPIO Disk{d['n']} is given twice")
            disks.append((src, d))
    where = ", ".join(s.name for s in details)
    kept = choose(((f"MPIO Disk{d['n']}", [f"Disk{d['n']}", str(d["n"])]) for _, d in disks), devices, where, "MPIO disk")
    if kept is not None:
        disks = [(s, d) for s, d in disks if f"MPIO Disk{d['n']}" in kept]
    notes: list[str] = []
    for src, d in disks:
        row = summary.get(d["n"])
        if row and row["lb"] in SHORT and SHORT[row["lb"]] != d["policy"]:
            notes.append(f"MPIO Disk{d['n']}: the summary says {row['lb']}, the disk's own output {d['policy']}: imported as the disk says")
        if row and row["dsm"] != "Microsoft DSM":
            notes.append(f"MPIO Disk{d['n']} is claimed by {row['dsm']}, not the Microsoft DSM: pathsel models MSDSM's policies")
    several = len(disks) > 1
    nexus: dict[str, dict[str, Any]] = {}
    nexus_of_id: dict[str, str] = {}  # path ID -> its nexus
    for src, d in disks:
        for p in d["paths"]:
            port, bus, target, lun = p["addr"].split("|")
            state = _STATES[p["state"]]
            why = ""
            if state is None:
                state, why = "unavailable", "Failed in the capture"
            key = f"{port}|{bus}|{target}"
            e = nexus.setdefault(key, {"id": p["id"], "state": state, "weight": int(p["weight"]), "why": why, "disks": {}, "line": p["line"]})
            if e["id"].lower() != p["id"].lower():  # MSDSM gives one ID to every LUN over a nexus
                raise src.fail(
                    p["line"], f"path {p['id']} is over {key}, which path {e['id']} uses (line {e['line']}): import the disks one at a time"
                )
            other = nexus_of_id.setdefault(p["id"].lower(), key)
            if other != key:
                raise src.fail(p["line"], f"path {p['id']} is over {key} here but over {other} on line {nexus[other]['line']}")
            if why and not e["why"]:
                e["state"], e["why"] = state, why
            if "tpg" in p:
                e.setdefault("tpg", p["tpg"])
            e["disks"][d["n"]] = int(lun)
            e.setdefault("per", {})[f"MPIO Disk{d['n']}"] = None if why else state
    refuse_group_state_clash(
        ((f"MPIO Disk{d['n']}", p["tpg"], _STATES[p["state"]], (src, p["line"])) for src, d in disks for p in d["paths"] if "tpg" in p),
        "{volume}'s target port group TPG_Id {group}",
    )
    for src, d in disks:
        missing = [e["id"] for e in nexus.values() if d["n"] not in e["disks"]]
        if missing:
            raise src.fail(d["line"], f"MPIO Disk{d['n']} has no path {missing[0]}, which other disks use: import the disks one at a time")
    sk = Skeleton("mpclaim", [s.name for s in sources], host, "scsi")
    # disks owned by different controllers (a path AO for one disk, ANO for another): ALUA states are per (disk,
    # target port group); the groups come from the TPG_Id lines, else the states' pattern (groups.py)
    names = [f"MPIO Disk{d['n']}" for _, d in disks]
    per_nexus = {k: dict(e["per"]) for k, e in nexus.items()}
    tpg = None
    array = SkArray("array1", "the output does not name arrays")
    if mixed_states(per_nexus):
        ids = {k: e["tpg"] for k, e in nexus.items() if "tpg" in e}
        tpg = infer_port_groups(per_nexus, names, ids)
        array.controllers, array.port_groups = tpg.controllers, list(tpg.controller_of.items())
        how = "the TPG_Id lines" if len(ids) == len(nexus) else "the paths' states over the disks"
        notes.append(
            f"disks owned by different controllers: {len(tpg.groups)} target port group(s) from {how}: "
            + ", ".join(f"{g} on controller {c}" for g, c in tpg.controller_of.items())
        )
    sk.arrays.append(array)
    for src, d in disks:
        row = summary.get(d["n"])
        lun = next(iter(e["disks"][d["n"]] for e in nexus.values()))
        vol = SkVolume(
            f"MPIO Disk{d['n']}",
            lun if several else None,
            None,
            ", ".join(x for x in (row["system"] if row else "", f"SN {d['sn']}" if d["sn"] else "", d["alua"]) if x),
        )
        if tpg is not None:
            vol.alua, vol.owner = tpg.alua[vol.name], tpg.owner[vol.name]
        sk.volumes.append(vol)
    for key, e in nexus.items():
        state = e["state"] if tpg is None else ("unavailable" if e["why"] else None)
        sk.paths.append(SkPath(e["id"], "array1", state, e["weight"], comment=e["why"], port_group=None if tpg is None else tpg.group_of[key]))
        if e["why"]:
            notes.append(f'path {e["id"]} is {e["why"]}: written alua = "unavailable"')
    if several and len({d["policy"] for _, d in disks}) > 1:  # each disk keeps its own (mpclaim -l -d N P): one run, the host as it is
        for vol, (_, d) in zip(sk.volumes, disks, strict=True):
            vol.policy = parse_spec(d["policy"])[0].text
        notes.append(
            "disks with different load-balance policies: each [[volumes]] entry keeps its own (policy); the scenario runs them together, once"
        )
        sk.policies.append(("", "as imported: per device"))
    else:
        for spec in dict.fromkeys(d["policy"] for _, d in disks):
            sk.policies.append((parse_spec(spec)[0].text, f"as imported: {spec}"))
    sk.told = [f"host {host}: {len(disks)} MPIO disk(s), {len(nexus)} path(s); policy {', '.join(dict.fromkeys(d['policy'] for _, d in disks))}"]
    sk.detection = "5s"
    sk.detection_note = "FILL IN: time for Windows to notice a path going down (MPIO PathVerificationPeriod, PDORemovePeriod)"
    sk.notes = notes
    return sk


# -- PowerShell and mpclaim out ----------------------------------------------------------------------------


@dataclass(frozen=True)
class MpioSetting:
    spec: str
    disk: int | None = None


def _disk_number(device: str) -> int:
    # ASCII digits only, and few of them: the number is written into the command as digits, never as the text given
    m = re.fullmatch(r"(?:MPIO *Disk)? *([0-9]{1,9})", device.strip(" "), re.IGNORECASE | re.ASCII)
    if not m:
        raise ScenarioError("command line", "--device", f"{shown(device)} is not an MPIO disk number (0, 1, ... or 'MPIO Disk1')")
    return int(m.group(1))


def emit_powershell(spec: PolicySpec, device: str | None = None) -> str:
    """MSDSM's default load-balance policy (PowerShell), or one MPIO disk's (``mpclaim -l -d N P``)."""
    if not spec.name.startswith("mpio:"):
        other = {"dm": "multipath.conf", "nvme": "nvme-udev"}.get(spec.name.split(":")[0], "esxcli")
        raise ScenarioError(
            "command line",
            "--emit powershell",
            f"{spec.text} is not a Microsoft DSM policy (mpio:fo, rr, rrws, lqd, wp, lb); emit it with --emit {other}",
        )
    if spec.name == "mpio:wp":
        raise ScenarioError(
            "command line",
            "--emit powershell",
            "Weighted Paths needs a weight on every path: pathsel does not write them; set it in the disk's MPIO properties",
        )
    short = {v: k for k, v in SHORT.items()}[spec.name]
    lines = [f"# pathsel: {comment_text(spec.text)}"]
    if spec.name == "mpio:fo" and spec["failback"] == 0:
        lines.append("# failback=0 is pathsel's reading of Fail Over Only without failback, not an MSDSM setting")
    if device is not None:
        lines.append(f"mpclaim.exe -l -d {_disk_number(device)} {POLICY_NUMBERS[spec.name]}")
    elif short in ("FOO", "RR", "LQD", "LB"):
        lines.append(f"Set-MSDSMGlobalDefaultLoadBalancePolicy -Policy {short}")
    else:
        lines.append(f"mpclaim.exe -l -m {POLICY_NUMBERS[spec.name]}")
    return "\n".join(lines) + "\n"


def read_powershell(src: Source) -> MpioSetting:
    """The policy PowerShell or ``mpclaim -l`` lines set (``--emit powershell`` read back)."""
    found: list[MpioSetting] = []
    numbers = {v: k for k, v in POLICY_NUMBERS.items()}
    for n, raw in enumerate(src.lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            words = ps_split(line)  # PowerShell's quoting, not a POSIX shell's (a backslash is no escape)
        except ValueError as e:
            raise src.fail(n, f"not a command line pathsel writes ({e})") from None
        if not words:
            continue
        head = words[0].lower()
        if head == "set-msdsmglobaldefaultloadbalancepolicy":
            if len(words) != 3 or words[1].lower() != "-policy" or words[2].upper() not in ("FOO", "RR", "LQD", "LB"):
                raise src.fail(n, "expected Set-MSDSMGlobalDefaultLoadBalancePolicy -Policy FOO|RR|LQD|LB")
            found.append(MpioSetting(SHORT[words[2].upper()]))
        elif head in ("mpclaim", "mpclaim.exe"):
            opts = [w.lower() for w in words[1:]]
            num = [bool(re.fullmatch("[0-9]{1,9}", w)) for w in opts]  # not str.isdigit: int() refuses '²'
            if opts[:2] == ["-l", "-d"] and len(opts) == 4 and num[2] and num[3] and int(opts[3]) in numbers:
                found.append(MpioSetting(numbers[int(opts[3])], int(opts[2])))
            elif opts[:2] == ["-l", "-m"] and len(opts) == 3 and num[2] and int(opts[2]) in numbers:
                found.append(MpioSetting(numbers[int(opts[2])]))
            else:
                raise src.fail(n, "expected mpclaim.exe -l -d DISK POLICY or mpclaim.exe -l -m POLICY (POLICY 1 to 6)")
        else:
            raise src.fail(n, f"not a command pathsel writes: {line[:50]!r}")
    if len(found) != 1:
        raise src.fail(None, f"sets a load-balance policy {len(found)} times; pathsel reads one")
    return MpioSetting(parse_spec(found[0].spec)[0].text, found[0].disk)
