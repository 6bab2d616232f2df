"""What hosts print and take: multipath listings in as a scenario skeleton, settings out as commands and config files.

* :func:`import_outputs` (``pathsel import KIND FILE...``): ESXi's ``esxcli
  storage nmp device list`` + ``core path list``, Linux ``multipath -ll``
  (+ ``multipath.conf``), ``nvme list-subsys`` (+ the ``iopolicy``), Windows
  ``mpclaim -s -d`` -> a scenario that loads and runs, with placeholders for
  what the output cannot tell (:mod:`pathsel.scenario.systems.skeleton`).
* :func:`emit` (``--emit KIND``): what applies a policy on that system:
  esxcli commands, a SATP claim rule, a multipath.conf section, an nvme-cli
  style udev rule, PowerShell or ``mpclaim``; a policy the system cannot run
  gets one refusal naming the kind that can.
* :func:`read_emitted`: the setting an emitted text makes, read back (the
  round trip the tests check).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import ScenarioError
from ...limits import MAX_DEVICE_PATHS, MAX_INT32, MAX_PATHS
from .text import Source, ascii_int, read_source

# The system modules read policy specs (the policy registry, whose hooks are compiled with numba) and build
# scenarios: imported when a function here runs, so the CLI's parser can list the kinds without them.
if TYPE_CHECKING:
    from ...policies.spec import PolicySpec
    from .esxi import EsxcliSetting
    from .linux_dm import DmSetting
    from .linux_nvme import NvmeSetting
    from .skeleton import Imported, Skeleton
    from .windows import MpioSetting

__all__ = ["import_outputs", "emit", "read_emitted", "IMPORT_KINDS", "EMIT_KINDS", "Imported", "Skeleton", "Source"]

# kind -> (importer as module.function, default host name, what to give)
IMPORT_KINDS = {
    "esxcli": ("esxi.import_esxcli", "esxi01", "esxcli storage nmp device list + esxcli storage core path list [+ nmp path list]"),
    "multipath": ("linux_dm.import_multipath", "linux01", "multipath -ll [+ /etc/multipath.conf]"),
    "nvme": ("linux_nvme.import_nvme", "linux01", "nvme list-subsys [-v] [+ /sys/class/nvme-subsystem/nvme-subsysN/iopolicy]"),
    "mpclaim": ("windows.import_mpclaim", "windows01", "mpclaim -s -d N for each MPIO disk [+ mpclaim -s -d]"),
}
EMIT_KINDS = ("esxcli", "satp-rule", "multipath.conf", "nvme-udev", "powershell")


def __getattr__(name: str) -> Any:
    """``Imported``, ``Skeleton`` (in ``__all__``) from their module on first use."""
    if name in ("Imported", "Skeleton"):
        value = getattr(importlib.import_module(".skeleton", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _function(where: str) -> Callable[..., Any]:
    """``module.function`` of this package, imported now."""
    module, name = where.split(".")
    f: Callable[..., Any] = getattr(importlib.import_module(f".{module}", __name__), name)
    return f


def import_outputs(
    kind: str,
    files: Sequence[str | Path],
    *,
    host: str | None = None,
    devices: Sequence[str] | None = None,
    output: str | Path | None = None,
    command: str | None = None,
    workload: str | Path | None = None,
) -> Imported:
    """A scenario skeleton from a host's multipath listings (see :data:`IMPORT_KINDS`).

    ``devices`` chooses what to import, each a name or a shell glob (ESXi
    devices, multipath map names or WWIDs, NVMe subsystem names or NQNs, MPIO
    disks as ``MPIO Disk1`` or ``1``; default: every shared one); ``output``
    names the scenario file in messages; ``workload``, a fio JSON file, gives
    the workload its job options (rw, bs, iodepth, numjobs, rwmixread).
    Raises ScenarioError (file, line, problem) for output it cannot read.
    """
    if kind not in IMPORT_KINDS:
        raise ScenarioError("command line", "import", f"unknown kind {kind!r} (kinds: {', '.join(IMPORT_KINDS)})")
    if not files:
        raise ScenarioError("command line", f"import {kind}", f"give the output files: {IMPORT_KINDS[kind][2]}")
    from .skeleton import Imported

    importer_at, default_host, _ = IMPORT_KINDS[kind]
    importer = _function(importer_at)
    if host and not _encodable(host):  # a shell's $'\xff' arrives as a surrogate escape: no file can hold it as text
        raise ScenarioError("command line", "--host", f"{host!r} is not text (bytes that are not UTF-8)")
    sources = [read_source(f) for f in files]
    kwargs: dict[str, Any] = {"host": host or default_host}
    if devices:
        kwargs["devices"] = list(devices)
    sk = importer(sources, **kwargs)
    _check_size(sk, sources[0].name)
    if workload is not None:
        sk.workload, sk.workload_source = fio_workload(workload), Path(workload).name
    cmd = command or f"pathsel import {kind} " + " ".join(str(f) for f in files)
    try:
        return Imported.of(sk, cmd, str(output) if output else "<imported>")
    except ScenarioError as e:
        # what the import wrote and validation refused came from a capture: name its file and line (recorded where
        # the importer read it), else the captures, never a scenario the user has not seen
        place, problem = e.problems[0]
        origin = sk.origin_of(place)
        if origin is not None:
            name, line = origin
            raise ScenarioError(name, f"line {line}" if line else "", f"{problem} (the imported scenario's {place})") from None
        names = ", ".join(s.name for s in sources)
        raise ScenarioError(names, "", f"the scenario imported from this output is refused at {place}: {problem}") from None


def _check_size(sk: Skeleton, where: str) -> None:
    """Refuse, at the capture, what the scenario would refuse anyway, before writing thousands of tables."""
    per_volume = [sum(p.array in v.arrays for p in sk.paths) if v.arrays else len(sk.paths) for v in sk.volumes] or [len(sk.paths)]
    if max(per_volume) > MAX_DEVICE_PATHS:
        raise ScenarioError(
            where, "", f"{max(per_volume):,} paths to one volume: more than the {MAX_DEVICE_PATHS:,} paths per device pathsel simulates"
        )
    if sum(per_volume) > MAX_PATHS:
        raise ScenarioError(
            where, "", f"{len(per_volume):,} volumes over {sum(per_volume):,} paths: more than the {MAX_PATHS:,} paths pathsel simulates"
        )


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def fio_workload(path: str | Path) -> dict[str, Any]:
    """A scenario workload from a fio JSON file's job options, checked as the scenario file checks it."""
    from ...measured import MeasureError, load_fio, read_text
    from ..sections.workloads import WorkloadConfig

    try:
        doc = load_fio(read_text(path), str(path))
    except MeasureError as e:
        raise ScenarioError(e.source, e.place, e.problem) from None
    job = doc["jobs"][0]
    opts = {**(doc.get("global options") or {}), **(job.get("job options") or {})}
    out: dict[str, Any] = {}
    for key in ("rw", "bs", "iodepth", "numjobs", "rwmixread"):
        if key in opts:
            value = str(opts[key])
            # ASCII digits only ('²' passes str.isdigit, then int() raises), and short enough for int(); anything
            # else stays text for WorkloadConfig to refuse with a located message
            number = ascii_int(value, 0, MAX_INT32) if key in ("iodepth", "numjobs", "rwmixread") else None
            out[key] = number if number is not None else value
    if "rw" not in out:
        raise ScenarioError(str(path), "jobs[0].job options", "has no rw: pathsel needs fio's rw to know the op mix")
    try:
        WorkloadConfig.model_validate(out)
    except ValueError as e:
        first = e.errors()[0] if hasattr(e, "errors") else {"loc": (), "msg": str(e)}
        raise ScenarioError(str(path), "jobs[0].job options." + ".".join(str(x) for x in first["loc"]), str(first["msg"])) from None
    return out


def _spec(spec: PolicySpec | str) -> PolicySpec:
    from ...policies.spec import PolicySpec, parse_spec

    if isinstance(spec, PolicySpec):
        return spec
    try:
        return parse_spec(spec)[0]
    except ValueError as e:
        raise ScenarioError("command line", "--policy", str(e)) from None


def emit(
    spec: PolicySpec | str,
    kind: str,
    *,
    device: str | None = None,
    vendor: str | None = None,
    model: str | None = None,
    satp: str = "VMW_SATP_ALUA",
    sched_num_req_outstanding: int | None = None,
) -> str:
    """The text that applies ``spec`` on a system: for ``device``, for a ``vendor``/``model``, or as the default.

    ``device`` is an ESXi device (naa...), a multipath WWID, an NVMe subsystem
    NQN or an MPIO disk number; ``vendor`` and ``model`` are the SCSI vendor
    and product (ESXi SATP rules, multipath.conf ``devices``) or, for NVMe,
    ``model`` is the subsystem's model. ``sched_num_req_outstanding`` (esxcli
    with ``device`` only) also sets the device's DSNRO. Raises ScenarioError
    (one line) for a policy the system cannot run or a setting it cannot take.
    """
    from .esxi import emit_esxcli, emit_satp_rule
    from .linux_dm import emit_multipath_conf
    from .linux_nvme import emit_nvme_udev
    from .windows import emit_powershell

    s = _spec(spec)
    from ...policies.oracle import NOT_SHIPPED

    if s.name in NOT_SHIPPED:  # it reads the engine's true state: no host can run it
        raise ScenarioError("command line", "--emit", f"{s.name} is clairvoyant (the league's bar, not shippable): no system can run it")
    if sched_num_req_outstanding is not None and kind != "esxcli":
        raise ScenarioError(
            "command line", "--sched-num-req-outstanding", f"is ESXi's Disk.SchedNumReqOutstanding, set with --emit esxcli, not {kind}"
        )
    if kind == "esxcli":
        return emit_esxcli(s, device, satp, sched_num_req_outstanding)
    if kind == "satp-rule":
        return emit_satp_rule(s, device, vendor, model, satp)
    if kind == "multipath.conf":
        return emit_multipath_conf(s, device, vendor, model)
    if kind == "nvme-udev":
        return emit_nvme_udev(s, device, model)
    if kind == "powershell":
        return emit_powershell(s, device)
    raise ScenarioError("command line", "--emit", f"unknown kind {kind!r} (kinds: {', '.join(EMIT_KINDS)})")


def read_emitted(kind: str, text: str, source: str = "<emitted>") -> EsxcliSetting | DmSetting | NvmeSetting | MpioSetting:
    """The setting an emitted text makes (its ``.spec`` and what it applies to), read back."""
    from .esxi import read_esxcli_commands
    from .linux_dm import read_multipath_conf
    from .linux_nvme import read_nvme_udev
    from .windows import read_powershell

    src = Source(source, text)
    readers: dict[str, Callable[[Source], EsxcliSetting | DmSetting | NvmeSetting | MpioSetting]] = {
        "esxcli": read_esxcli_commands,
        "satp-rule": read_esxcli_commands,
        "multipath.conf": read_multipath_conf,
        "nvme-udev": read_nvme_udev,
        "powershell": read_powershell,
    }
    if kind not in readers:
        raise ScenarioError("command line", "--emit", f"unknown kind {kind!r} (kinds: {', '.join(EMIT_KINDS)})")
    return readers[kind](src)


def __dir__() -> list[str]:
    """The names loaded on first use too (tab completion)."""
    return sorted(set(globals()) | set(__all__))
