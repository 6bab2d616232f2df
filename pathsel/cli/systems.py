"""Your hosts in and out: ``pathsel import`` (a scenario from a host's multipath listings) and ``--emit`` (the
commands or configuration that apply a policy on a host), the command line's side of :mod:`pathsel.scenario.systems`.

``--emit KIND`` is an option of ``pathsel simulate`` (the chosen policy) and
``pathsel recommend`` (the recommended setting), which take it from here; each
prints one located line and exits 2 on bad input, as every command does.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import TYPE_CHECKING, Any

from ..errors import ScenarioError
from ..scenario.systems import EMIT_KINDS, IMPORT_KINDS, emit, import_outputs
from ..scenario.systems.quoting import comment_text, shown
from .common import writing

if TYPE_CHECKING:
    from ..policies.spec import PolicySpec
    from ..scenario import Scenario
    from ..studies.recommend import Recommendation

__all__ = ["add_import", "add_emit_options", "check_emit_only", "emit_simulate", "emit_recommended"]


def _ascii_int(text: str) -> int:
    """A whole number in ASCII digits (int() also reads '\u0663' as 3, and refuses '\u00b2' in its own words)."""
    if not (text.isascii() and re.fullmatch(r"[-+]?[0-9]+", text.strip())):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    return int(text)


def add_emit_options(parser: argparse.ArgumentParser, what: str) -> None:
    """``--emit KIND`` and what it applies to, on simulate and recommend."""
    g = parser.add_argument_group("emit", f"print what applies {what} on a host, instead of the usual output")
    g.add_argument(
        "--emit",
        choices=EMIT_KINDS,
        metavar="KIND",
        help=f"esxcli, satp-rule, multipath.conf, nvme-udev or powershell: the commands or configuration that apply {what}",
    )
    g.add_argument(
        "--device",
        metavar="ID",
        help="for one device: an ESXi device (naa...), a multipath WWID, an NVMe subsystem NQN, an MPIO disk number (default: as the default for every device)",
    )
    g.add_argument(
        "--vendor", help="the SCSI vendor a SATP rule or a multipath.conf devices entry matches (esxcli storage core device list, multipath -ll)"
    )
    g.add_argument("--model", help="the SCSI model (product) to match, or an NVMe subsystem's model (nvme list-subsys -v)")
    # no argparse default: an emit-only option given without --emit is refused (check_emit_only), so its absence shows
    g.add_argument("--satp", help="the SATP of a SATP rule or a SATP's default PSP (default: VMW_SATP_ALUA)")
    g.add_argument(
        "--sched-num-req-outstanding",
        type=_ascii_int,
        metavar="N",
        help="esxcli with --device: also set the device's Disk.SchedNumReqOutstanding (DSNRO, 1..256; "
        "pathsel simulate: default the scenario host's sched_num_req_outstanding)",
    )


# the options that only shape --emit's output: without --emit they would be silently ignored
EMIT_ONLY = ("device", "vendor", "model", "satp", "sched_num_req_outstanding")


def check_emit_only(args: argparse.Namespace) -> None:
    """Refuse an emit-only option given without ``--emit`` (it would change nothing, and say nothing of it)."""
    if getattr(args, "emit", None):
        return
    for name in EMIT_ONLY:
        if getattr(args, name, None) is not None:
            option = "--" + name.replace("_", "-")
            raise ScenarioError(
                "command line", option, f"shapes what --emit KIND prints and applies only with --emit: give --emit KIND, or leave {option} out"
            )


def _emit(spec: PolicySpec | str, args: argparse.Namespace, header: list[str], dsnro: int | None = None) -> int:
    """Print ``header`` (each a ``#`` comment line, user text escaped so it stays on that line), then the emitted text;
    ``dsnro``: the DSNRO to set (default: ``--sched-num-req-outstanding``)."""
    if dsnro is None:
        dsnro = getattr(args, "sched_num_req_outstanding", None)
    satp = args.satp if args.satp is not None else "VMW_SATP_ALUA"
    text = emit(spec, args.emit, device=args.device, vendor=args.vendor, model=args.model, satp=satp, sched_num_req_outstanding=dsnro)
    sys.stdout.write("".join(f"# {comment_text(line)}\n" for line in header) + text)
    return 0


def emit_simulate(args: argparse.Namespace, scenario: Scenario) -> int:
    """``pathsel simulate --emit KIND``: the one policy chosen (``--policy``, or the scenario's only one), not run."""
    runs = scenario.runs
    if len(runs) != 1:
        labels = comment_text(", ".join(r.label for r in runs))  # one line, however the labels are written
        raise ScenarioError("command line", f"--emit {args.emit}", f"choose one policy with --policy (the scenario runs {len(runs)}: {labels})")
    run = runs[0]
    dsnro = getattr(args, "sched_num_req_outstanding", None)
    if args.emit == "esxcli" and args.device is not None and dsnro is None:
        # the scenario's DSNRO travels with the policy to the device it names (one value per host: the first that sets it)
        hosts = getattr(getattr(scenario, "model", None), "hosts", ())
        dsnro = next((h.sched_num_req_outstanding for h in hosts if getattr(h, "sched_num_req_outstanding", None)), None)
    if not run.builtin:
        raise ScenarioError("command line", f"--emit {args.emit}", f"{shown(run.label)} is a Python policy: no host runs it")
    if len({spec for _, spec in run.devices}) > 1:  # a policy per device: one setting per device, not one for the host
        raise ScenarioError(
            "command line",
            f"--emit {args.emit}",
            f"{shown(run.label)} runs a policy per device ({comment_text(run.assignment)}): choose one with --policy SPEC",
        )
    header = [f"pathsel simulate --emit {args.emit}: {run.label}"]
    spec = run.policy
    if args.emit == "esxcli" and spec is not None and spec.name == "fixed" and spec["preferred"]:
        return _emit_fixed_per_device(spec, args, scenario, header, dsnro)
    # the PolicySpec itself, not its text: a path name (fixed:preferred=...) may hold "," or "=", which the text cannot
    return _emit(run.policy, args, header, dsnro)


def _emit_fixed_per_device(spec: PolicySpec, args: argparse.Namespace, scenario: Scenario, header: list[str], dsnro: int | None) -> int:
    """FIXED's preferred path is a device's setting (``esxcli storage nmp psp fixed deviceconfig set --device D --path
    P``): one block per device, each naming that device's own path (issue 48). ``preferred`` names one device's path
    or a nexus (its path on each device); the device is the volume (an imported scenario names its volumes by
    device, naa...), or ``--device`` when the scenario has one volume."""
    from ..policies.spec import parse_spec
    from ..scenario.names import path_names

    preferred = spec["preferred"]
    volumes = [v.name for v in scenario.model.volumes]
    if args.device is not None and len(volumes) > 1 and args.device not in volumes:
        raise ScenarioError(
            "command line",
            "--device",
            f"{comment_text(args.device)[:80]!r} is not one of the scenario's volumes ({comment_text(', '.join(volumes))[:200]}): "
            f"fixed:preferred={comment_text(preferred)[:60]} is set per device, each on its own path; give a volume's name, "
            "or no --device for every device",
        )
    if args.device is None and not volumes:
        raise ScenarioError("command line", "--emit esxcli", "fixed:preferred=... names a path of one device: give --device")
    by_host = {h: n for h, n in path_names(scenario.model).items() if n.devices}
    blocks: list[str] = []
    for host, names in by_host.items():
        for volume in names.devices:
            if args.device is not None and len(volumes) > 1 and volume != args.device:
                continue
            path = names.device_path(volume, preferred)
            # a device without the path named keeps ESXi's default, the first AO path (as the run did)
            own = parse_spec("fixed", {**dict(spec.params), "preferred": path or ""})[0]
            text = emit(own, "esxcli", device=args.device or volume, satp=args.satp or "VMW_SATP_ALUA", sched_num_req_outstanding=dsnro)
            blocks.append((f"# host {comment_text(host)}\n" if len(by_host) > 1 else "") + text)
    sys.stdout.write("".join(f"# {comment_text(line)}\n" for line in header) + "".join(blocks))
    return 0


def emit_recommended(args: argparse.Namespace, rec: Recommendation) -> int:
    """``pathsel recommend --emit KIND``: the first metric's recommended setting."""
    metric, m = next(iter(rec.metrics.items()))
    others = {k: v.spec for k, v in rec.metrics.items() if v.spec != m.spec}
    # the results file's name, its labels and specs are user text: _emit keeps each header line one comment line
    header = [f"pathsel recommend {args.results} --emit {args.emit}: {m.recommended} (best worst-case regret in {metric})"]
    if others:
        header.append("other metrics recommend otherwise: " + "; ".join(f"{k}: {v}" for k, v in others.items()))
    if not m.spec:
        raise ScenarioError(comment_text(str(args.results)), "", f"the recommended setting {shown(str(m.recommended))} has no policy spec to apply")
    if "; " in m.spec or re.match(r"[^:=]+=", m.spec):  # a policy per device ("lun0=SPEC; lun1=SPEC"): no one setting
        raise ScenarioError(
            comment_text(str(args.results)),
            "",
            f"the recommended setting {shown(str(m.recommended))} runs a policy per device ({comment_text(m.spec)}): "
            "emit each device's with pathsel simulate --emit KIND --policy SPEC --device ID",
        )
    return _emit(m.spec, args, header)


def _cmd_import(args: argparse.Namespace) -> int:
    from ..outputs import check_output, write_atomic

    if args.output:  # before reading anything: -o onto a capture would destroy it
        captures = [("a captured output", f) for f in args.files]
        check_output(args.output, [*captures, ("--workload", args.workload)], what="scenario", option="-o")
    command = "pathsel import " + args.kind + " " + " ".join(args.files)
    imp = import_outputs(args.kind, args.files, host=args.host, devices=args.device, output=args.output, command=command, workload=args.workload)
    if args.output:
        with writing(args.output):
            write_atomic(args.output, imp.text)  # the old file or the new one, never half
    else:
        sys.stdout.write(imp.text)
    if not args.quiet:
        sc = imp.scenario
        paths = sum(g.count for g in sc.model.paths)
        where = args.output or "stdout"
        err = sys.stderr
        print(
            f"pathsel import: wrote {where}: {len(sc.model.hosts)} host, {max(len(sc.model.volumes), 1)} volume(s), "
            f"{paths} path(s), {len(sc.model.arrays)} array(s); policy {', '.join(r.label.removeprefix('as imported: ') for r in sc.runs)}",
            file=err,
        )
        print(
            "the output does not tell these; their placeholders load and run, fill them in or fit them "
            f"(pathsel calibrate {args.output or 'SCENARIO'} --measured FILE --fit NAME):",
            file=err,
        )
        width = max(len(p) for p, _, _ in imp.to_fill)
        for place, value, how in imp.to_fill:
            print(f"  {place:{width}s}  {value:>8s}  {how}", file=err)
        for note in imp.notes:
            print(f"note: {note}", file=err)
    return 0


def add_import(sub: argparse._SubParsersAction[Any]) -> None:
    """``pathsel import``: a scenario skeleton from a host's multipath listings."""
    imp = sub.add_parser("import", help="a scenario skeleton from a host's multipath listings (esxcli, multipath -ll, nvme list-subsys, mpclaim)")
    imp.add_argument("kind", choices=list(IMPORT_KINDS), metavar="KIND", help="; ".join(f"{k}: {v[2]}" for k, v in IMPORT_KINDS.items()))
    imp.add_argument("files", nargs="+", metavar="FILE", help="the captured outputs, in any order")
    imp.add_argument("-o", "--output", metavar="TOML", help="where to write the scenario (default: stdout)")
    imp.add_argument("--host", help="the host's name in the scenario (the outputs do not say it)")
    imp.add_argument(
        "--device",
        action="append",
        metavar="ID",
        help="import only this device, a name or a shell glob (repeatable): an ESXi device, a multipath map or WWID, "
        "an NVMe subsystem or NQN, an MPIO disk (default: every shared device)",
    )
    imp.add_argument("--workload", metavar="FIO_JSON", help="take the workload (rw, bs, iodepth, numjobs) from fio --output-format=json output")
    imp.add_argument("-q", "--quiet", action="store_true", help="no list of what to fill in on stderr")
    imp.set_defaults(func=_cmd_import)
