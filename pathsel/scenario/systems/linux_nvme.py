"""Linux NVMe native multipath: ``nvme list-subsys`` (and the subsystem's ``iopolicy``) in, a udev rule out.

Sources:

* nvme-cli, ``nvme-print-stdout.c`` (``stdout_subsys_config``: the line
  ``nvme-subsysN - NQN=...``, indented ``hostnqn=``, and with ``-v``
  ``model=``, ``serial=``, ``firmware=``, ``iopolicy=``, ``type=``; then
  ``\\`` and one `` +- nvmeN TRANSPORT ADDRESS STATE [ANA-STATE]`` line per
  controller, the ANA state when a namespace is given, as in ``nvme
  list-subsys /dev/nvme0n1``), and Documentation/nvme-list-subsys.txt, tag
  v2.14, linux-nvme/nvme-cli, https://github.com/linux-nvme/nvme-cli
* The Linux kernel, ``drivers/nvme/host/multipath.c``: the subsystem's
  ``iopolicy`` sysfs attribute (``/sys/class/nvme-subsystem/nvme-subsysN/iopolicy``:
  ``numa``, ``round-robin``, ``queue-depth``) and the ANA states
  (``optimized``, ``non-optimized``, ``inaccessible``, ``persistent-loss``,
  ``change``).
* nvme-cli's udev rules, ``nvmf-autoconnect/udev-rules/71-nvmf-netapp.rules.in``:
  ``ACTION=="add", SUBSYSTEM=="nvme-subsystem", ATTR{subsystype}=="nvm",
  ATTR{model}=="NetApp ONTAP Controller", ATTR{iopolicy}="queue-depth"``,
  which is what ``--emit nvme-udev`` writes (udev(7) for the syntax).

How pathsel reads it: a subsystem is a volume on its own array (its NQN);
a controller is a path, named ``nvmeN``; ANA ``optimized`` is AO,
``non-optimized`` ANO, ``inaccessible`` and ``persistent-loss``
unavailable, ``change`` transitioning; a controller that is not ``live`` is
written unavailable, with a note. Without ANA states (``nvme list-subsys``
with no device) every live controller is written AO, with a note. The
policy is ``nvme:IOPOLICY``, from ``iopolicy=`` (``-v``) or an ``iopolicy``
file (its content, as ``cat /sys/class/nvme-subsystem/nvme-subsys0/iopolicy``
prints it), else the kernel's default ``numa``, with a note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...errors import ScenarioError
from ...policies.spec import PolicySpec
from .groups import choose
from .quoting import comment_text, udev_value
from .skeleton import SkArray, Skeleton, SkPath, SkVolume
from .text import Source, check_name

__all__ = ["import_nvme", "emit_nvme_udev", "read_nvme_udev", "NvmeSetting", "IOPOLICIES"]

IOPOLICIES = ("numa", "round-robin", "queue-depth")
_ANA = {"optimized": "AO", "non-optimized": "ANO", "inaccessible": "unavailable", "persistent-loss": "unavailable", "change": "transitioning"}
# re.ASCII and at most 9 digits: \d would take Arabic-Indic digits, and the kernel numbers no further
_SUBSYS = re.compile(r"^(?P<name>nvme-subsys[0-9]{1,9}) - NQN=(?P<nqn>\S+)\s*$", re.ASCII)
_ATTR = re.compile(r"^\s+(?P<key>[a-z_]+)=(?P<value>.*)$", re.ASCII)
_CTRL = re.compile(r"^ \+- (?P<name>nvme[0-9]{1,9}) (?P<transport>\S+) (?P<addr>\S*) ?(?P<state>[a-z-]+)(?: (?P<ana>[a-z-]+))?\s*$", re.ASCII)


@dataclass
class _Subsys:
    name: str
    nqn: str
    line: int
    attrs: dict[str, str] = field(default_factory=dict)
    attr_lines: dict[str, int] = field(default_factory=dict)
    ctrls: list[dict[str, Any]] = field(default_factory=list)
    open: bool = False  # its "\" line was seen


def _parse(src: Source) -> list[_Subsys]:
    subs: list[_Subsys] = []
    ctrl_lines: dict[str, int] = {}  # controller name -> its line: each is one path
    named: dict[str, int] = {}  # subsystem names and "NQN=..." -> the line of their subsystem
    for n, raw in enumerate(src.lines, 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        if m := _SUBSYS.match(line):
            for key in (m.group("name"), "NQN=" + m.group("nqn")):  # listed twice: two volumes of one name, or one subsystem's controllers split
                if key in named:
                    raise src.fail(n, f"{m.group('name')} (NQN {m.group('nqn')[:60]}) is listed twice (the first is line {named[key]})")
                named[key] = n
            subs.append(_Subsys(m.group("name"), check_name(src, n, "NQN", m.group("nqn")), n))
            continue
        if line.startswith("nvme-subsys"):
            raise src.fail(n, f"expected 'nvme-subsysN - NQN=...', got {line[:60]!r}")
        if not subs:
            raise src.fail(n, f"{line.strip()[:40]!r} comes before any 'nvme-subsysN - NQN=...' line")
        if line.strip() == "\\":
            subs[-1].open = True
            continue
        if (a := _ATTR.match(line)) and not subs[-1].open:
            key = a.group("key")
            if key in subs[-1].attrs:
                raise src.fail(n, f"a second {key}= for {subs[-1].name} (the first is line {subs[-1].attr_lines[key]})")
            subs[-1].attrs[key] = a.group("value").strip()
            subs[-1].attr_lines[key] = n
            continue
        if m := _CTRL.match(line):
            ana = m.group("ana")
            if ana is not None and ana not in _ANA:
                raise src.fail(n, f"ANA state {ana!r} is not one of {', '.join(_ANA)}")
            if m.group("name") in ctrl_lines:
                raise src.fail(n, f"controller {m.group('name')} is listed twice (the first is line {ctrl_lines[m.group('name')]})")
            ctrl_lines[m.group("name")] = n
            subs[-1].ctrls.append({**m.groupdict(), "line": n})
            continue
        raise src.fail(n, f"expected a controller line such as ' +- nvme0 tcp traddr=...,trsvcid=4420 live optimized', got {line.strip()[:60]!r}")
    if not subs:
        raise src.fail(1, "no 'nvme-subsysN - NQN=...' line: not nvme list-subsys output")
    for s in subs:
        if not s.ctrls:
            raise src.fail(s.line, f"{s.name} lists no controllers (is the output cut short?)")
    return subs


def _iopolicy_file(src: Source) -> str:
    words = src.text.split()
    if len(words) != 1 or words[0] not in IOPOLICIES:
        raise src.fail(1, f"iopolicy {src.text.strip()[:30]!r} is not {', '.join(IOPOLICIES)} (the content of .../nvme-subsysN/iopolicy)")
    return words[0]


def import_nvme(sources: list[Source], host: str = "linux01", devices: list[str] | None = None) -> Skeleton:
    """A skeleton from ``nvme list-subsys`` (and an ``iopolicy`` file); ``devices``: subsystem names or NQNs (globs) to keep."""
    lists = [s for s in sources if "NQN=" in s.text]
    others = [s for s in sources if s not in lists]
    if len(lists) != 1:
        raise ScenarioError(
            (lists[1] if lists else sources[0]).name,
            "",
            "give one nvme list-subsys output (and optionally the iopolicy file)"
            if lists
            else "no nvme list-subsys output among the files (a line such as 'nvme-subsys0 - NQN=...')",
        )
    if len(others) > 1:
        raise ScenarioError(others[1].name, "", "give one iopolicy file")
    src = lists[0]
    policy_file = _iopolicy_file(others[0]) if others else None
    subs = _parse(src)
    kept = choose(((s.name, [s.nqn]) for s in subs), devices, src.name, "subsystem")
    if kept is not None:
        subs = [s for s in subs if s.name in kept]
    notes: list[str] = []
    sk = Skeleton("nvme", [s.name for s in sources], host, "nvme")
    several = len(subs) > 1
    for i, s in enumerate(subs):
        array = f"array{i + 1}"
        sk.arrays.append(SkArray(array, f"{s.nqn}" + (f" ({s.attrs['model']})" if "model" in s.attrs else "")))
        sk.volumes.append(SkVolume(s.name, None, [array], s.nqn))
        if "iopolicy" in s.attrs:
            iop = s.attrs["iopolicy"]
            if iop not in IOPOLICIES:
                raise src.fail(s.attr_lines["iopolicy"], f"iopolicy {iop[:60]!r} is not {', '.join(IOPOLICIES)}")
        elif policy_file is not None:
            iop = policy_file
        else:
            iop = "numa"
            notes.append(
                f"{s.name}: iopolicy numa (the kernel's default): the output does not show it; "
                "run nvme list-subsys -v or give the content of /sys/class/nvme-subsystem/nvme-subsysN/iopolicy"
            )
        spec = f"nvme:{iop}"
        if (spec, f"as imported: {spec}") not in sk.policies:
            sk.policies.append((spec, f"as imported: {spec}"))
        for c in s.ctrls:
            state, why = ("AO", "")
            if c["ana"] is not None:
                state = _ANA[c["ana"]]
            if c["state"] != "live":
                state, why = "unavailable", f"{c['state']} in the capture"
                notes.append(f'{c["name"]} is {c["state"]}: written alua = "unavailable"')
            sk.paths.append(SkPath(c["name"], array, state, comment=", ".join(x for x in (f"{c['transport']} {c['addr']}", why) if x)))
        if all(c["ana"] is None for c in s.ctrls):
            notes.append(f"{s.name}: no ANA states (run nvme list-subsys /dev/nvmeXnY to see them): every live controller written optimized (AO)")
        if any(c["ana"] == "non-optimized" for c in s.ctrls):
            notes.append(f"{s.name}: non-optimized controllers may be on a second array (a metro cluster): the output does not say")
    if several and len({spec for spec, _ in sk.policies}) > 1:
        notes.append("subsystems with different iopolicies: each is a run of the whole scenario")
    sk.told = [f"host {host}: {len(subs)} subsystem(s), {len(sk.paths)} controller(s); policy {', '.join(spec for spec, _ in sk.policies)}"]
    sk.detection = "nvme"
    sk.detection_note = "NVMe-oF keep-alive timeout (5 s)"
    sk.notes = notes
    return sk


# -- udev rule out -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NvmeSetting:
    spec: str
    model: str | None = None
    nqn: str | None = None


def emit_nvme_udev(spec: PolicySpec, nqn: str | None = None, model: str | None = None) -> str:
    """A udev rule in nvme-cli's style that sets the subsystems' ``iopolicy`` to ``spec``'s."""
    if not spec.name.startswith("nvme:"):
        other = {"dm": "multipath.conf", "mpio": "powershell"}.get(spec.name.split(":")[0], "esxcli")
        raise ScenarioError(
            "command line",
            "--emit nvme-udev",
            f"{spec.text} is not an NVMe iopolicy (nvme:numa, nvme:round-robin, nvme:queue-depth); emit it with --emit {other}",
        )
    iopolicy = spec.name[5:]
    if iopolicy not in IOPOLICIES:  # nvme:adaptive: an RFC's iopolicy, which no released kernel's sysfs accepts
        raise ScenarioError(
            "command line",
            "--emit nvme-udev",
            f"{spec.text}: no released kernel takes iopolicy {iopolicy!r} (writing it to .../iopolicy fails; "
            f"the kernel's are {', '.join(IOPOLICIES)}): pathsel writes no rule for it",
        )
    match = ['ACTION=="add"', 'SUBSYSTEM=="nvme-subsystem"', 'ATTR{subsystype}=="nvm"']
    # udev_value refuses what udev would read as more than this literal value (a quote, an escape, a glob, a
    # substitution): a --model of '", RUN+="...' must not become a key of its own
    if nqn is not None:
        match.append(f"ATTR{{subsysnqn}}=={udev_value(nqn, '--device')}")
    elif model is not None:
        match.append(f"ATTR{{model}}=={udev_value(model, '--model')}")
    lines = [f"# pathsel: {comment_text(spec.text)}  (/etc/udev/rules.d/71-nvme-iopolicy.rules)"]
    if iopolicy == "queue-depth":
        lines.append("# iopolicy queue-depth needs Linux 6.11 or later")
    if nqn is None and model is None:
        # the kernel's own default is numa (nvme_core's iopolicy parameter); the rule only covers subsystems it sees
        lines.append(
            f"# every NVMe subsystem; the kernel's default is numa: to make {iopolicy} the default for subsystems "
            f"this rule does not see, boot with nvme_core.iopolicy={iopolicy}"
        )
    lines.append(", ".join(match + [f'ATTR{{iopolicy}}="{iopolicy}"']))
    return "\n".join(lines) + "\n"


_RULE_KEYS = {"ACTION", "SUBSYSTEM", "ATTR{subsystype}", "ATTR{subsysnqn}", "ATTR{model}", "ATTR{iopolicy}"}
_RULE_KEY = re.compile(r'(?P<key>[A-Z]+(?:\{[a-z_]+\})?)(?P<op>==|!=|\+=|=)"(?P<value>[^"]*)"')


def read_nvme_udev(src: Source) -> NvmeSetting:
    """The iopolicy a udev rule sets, and for which model or subsystem (``--emit nvme-udev`` read back)."""
    found: list[NvmeSetting] = []
    for n, raw in enumerate(src.lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        pairs = [(m.group("key"), (m.group("op"), m.group("value"))) for m in _RULE_KEY.finditer(line)]
        keys = dict(pairs)
        left = _RULE_KEY.sub("", line).replace(",", "").strip()
        if left or not keys:
            raise src.fail(n, f'not a udev rule of KEY=="value" and KEY="value" pairs: {(left or line)[:40]!r}')
        if len(keys) != len(pairs) or not keys.keys() <= _RULE_KEYS:
            # a key pathsel never writes (RUN+=, PROGRAM, ...) or one written twice: not what --emit made
            odd = sorted({k for k, _ in pairs if k not in _RULE_KEYS} or {k for k, _ in pairs if [p for p, _ in pairs].count(k) > 1})
            raise src.fail(n, f"a udev rule pathsel does not write: {', '.join(odd)}")
        if "ATTR{iopolicy}" not in keys:
            continue
        op, iopolicy = keys["ATTR{iopolicy}"]
        if op != "=" or iopolicy not in IOPOLICIES:
            raise src.fail(n, f'ATTR{{iopolicy}}{op}"{iopolicy}" does not set one of {", ".join(IOPOLICIES)}')
        found.append(NvmeSetting(f"nvme:{iopolicy}", keys.get("ATTR{model}", (None, None))[1], keys.get("ATTR{subsysnqn}", (None, None))[1]))
    if len(found) != 1:
        raise src.fail(None, f"sets ATTR{{iopolicy}} in {len(found)} rules; pathsel reads one")
    return found[0]
