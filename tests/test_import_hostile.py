"""`pathsel import` against hostile captures and names (issue 38).

* A table of hostile captures, each run through the real CLI (``pathsel import ...``): one located line on
  stderr and exit status 2, or, for the valid ones pathsel used to refuse, a scenario that loads.
* A Hypothesis property: arbitrary Unicode host, device, map, NQN, vendor, model, serial and capture-file
  names fed through each importer give either a located ScenarioError or a scenario that TOML parses to
  exactly the expected structure (the host name is hosts[0].name, no key an input did not earn, no seed)
  and that pathsel loads. PATHSEL_EXAMPLES sets the examples (default 200; the issue's target: 10,000).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pathsel.errors import ScenarioError
from pathsel.scenario.systems import IMPORT_KINDS, import_outputs

from .conftest import ROOT

DATA = ROOT / "tests" / "data" / "import"
EXAMPLES = int(os.environ.get("PATHSEL_EXAMPLES", "200"))


def _pathsel() -> list[str]:
    script = Path(sys.executable).parent / "pathsel"
    return [str(script)] if script.exists() else [sys.executable, "-c", "import sys; from pathsel.cli import main; sys.exit(main())"]


def _text(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


DEVICES = _text("esxcli-nmp-device-list.txt")
CORE = _text("esxcli-core-path-list.txt")
LL = _text("multipath-ll.txt")
NVME = _text("nvme-list-subsys-verbose.txt")
DISK0 = _text("mpclaim-s-d-0.txt")
NAA1 = "naa.624a93708a75393becad4e43000113ee"
FIO = _text("fio-randwrite.json")
ALT_DEV = _text("esxcli-alternating-nmp-device-list.txt")
ALT_CORE = _text("esxcli-alternating-core-path-list.txt")
ALT_NMP = _text("esxcli-alternating-nmp-path-list.txt")
ALT_DISK0 = _text("mpclaim-alternating-s-d-0.txt")
ALT_DISK1 = _text("mpclaim-alternating-s-d-1.txt")
NAA_ALT = "naa.68ccf098003c4e1a9d2b5f7e00000011"
# the second path of the first LUN put in the first path's target port group, still unoptimized
_ANO_IN_TPG1 = (
    "Group State: active unoptimized\n   Array Priority: 0\n   Storage Array Type Path Config: {TPG_id=2",
    "Group State: active unoptimized\n   Array Priority: 0\n   Storage Array Type Path Config: {TPG_id=1",
)


def _core_block(i: int) -> str:
    return CORE.strip("\n").split("\n\n")[i]


def _conf(*lines: str) -> str:
    return "defaults {\n" + "".join(f"\t{x}\n" for x in lines) + "}\n"


def _device_conf(vendor: str, product: str, *lines: str) -> str:
    body = "".join(f"\t\t{x}\n" for x in (f'vendor "{vendor}"', f'product "{product}"', *lines))
    return "devices {\n\tdevice {\n" + body + "\t}\n}\n"


# (id, kind, {file name: content, or "@name" for a shipped sample, or a path such as /dev/zero}, extra args,
#  file, place, fragment of the problem); file is the name the message starts with ("command line" or a file)
BAD = [
    # malformed numbers: superscript and Arabic-Indic digits, which str.isdigit or \d accept
    (
        "esxcli-superscript-iops",
        "esxcli",
        {"dev.txt": DEVICES.replace("iops=1,bytes", "iops=²,bytes"), "core.txt": CORE},
        [],
        "dev.txt",
        "line 16",
        "iops='²' is not a whole number",
    ),
    (
        "esxcli-arabic-indic-runtime",
        "esxcli",
        {"dev.txt": DEVICES, "core.txt": CORE.replace("vmhba1:C0:T0:L1", "vmhba١:C0:T0:L1")},
        [],
        "core.txt",
        "line 3",
        "runtime name 'vmhba١:C0:T0:L1' is not vmhbaA:CC:TT:LL",
    ),
    (
        "multipath-superscript-polling",
        "multipath",
        {"ll.txt": LL, "m.conf": _conf("polling_interval ²")},
        [],
        "m.conf",
        "line 2",
        "polling_interval '²' is not a whole number of seconds",
    ),
    (
        "multipath-superscript-retry",
        "multipath",
        {"ll.txt": LL, "m.conf": _conf("no_path_retry ³")},
        [],
        "m.conf",
        "line 2",
        "no_path_retry '³' is not queue, fail or a whole number",
    ),
    (
        "multipath-superscript-prio",
        "multipath",
        {"ll.txt": LL.replace("prio=50", "prio=5²")},
        [],
        "ll.txt",
        "line 3",
        "a path group line without prio= and status=",
    ),
    (
        "mpclaim-superscript-count",
        "mpclaim",
        {"d0.txt": DISK0.replace("04 Paths", "0⁴ Paths")},
        [],
        "d0.txt",
        "line 1",
        "expected a disk line such as",
    ),
    ("hctl-fullwidth-digits", "multipath", {"ll.txt": LL.replace("11:0:1:0 sdb", "１1:0:1:0 sdb")}, [], "ll.txt", "line 4", "expected a path line"),
    # values it does not expect
    (
        "nvme-unknown-iopolicy",
        "nvme",
        {"n.txt": NVME.replace("iopolicy=round-robin", "iopolicy=fastest")},
        [],
        "n.txt",
        "line 6",
        "iopolicy 'fastest' is not numa, round-robin, queue-depth",
    ),
    (
        "nvme-iopolicy-twice",
        "nvme",
        {"n.txt": NVME.replace("               type=nvm", "               iopolicy=numa")},
        [],
        "n.txt",
        "line 7",
        "a second iopolicy= for nvme-subsys0 (the first is line 6)",
    ),
    ("mpclaim-path-count", "mpclaim", {"d0.txt": DISK0.replace("04 Paths", "05 Paths")}, [], "d0.txt", "line 1", "says 5 paths but lists 4"),
    (
        "mpclaim-no-paths",
        "mpclaim",
        {"d0.txt": "MPIO Disk0: 00 Paths, Round Robin, Implicit Only\n"},
        [],
        "d0.txt",
        "line 1",
        "MPIO Disk0 has no paths",
    ),
    (
        "esxcli-useano",
        "esxcli",
        {"dev.txt": DEVICES.replace("useANO=0; lastPath", "useANO=maybe; lastPath"), "core.txt": CORE},
        [],
        "dev.txt",
        "line 16",
        "useANO='maybe' is not 0 or 1",
    ),
    # out of range: zero, negative, 1e300, 1e400, past int64
    (
        "esxcli-iops-zero",
        "esxcli",
        {"dev.txt": DEVICES.replace("iops=1,bytes", "iops=0,bytes"), "core.txt": CORE},
        [],
        "dev.txt",
        "line 16",
        "iops must be in 1..2147483647, got 0",
    ),
    (
        "esxcli-iops-1e300",
        "esxcli",
        {"dev.txt": DEVICES.replace("iops=1,bytes", "iops=1e300,bytes"), "core.txt": CORE},
        [],
        "dev.txt",
        "line 16",
        "iops='1e300' is not a whole number",
    ),
    (
        "esxcli-iops-past-int64",
        "esxcli",
        {"dev.txt": DEVICES.replace("iops=1,bytes", "iops=99999999999999999999,bytes"), "core.txt": CORE},
        [],
        "dev.txt",
        "line 16",
        "iops='99999999999999999999' is not a whole number",
    ),
    (
        "esxcli-lun-past-int64",
        "esxcli",
        {"dev.txt": DEVICES, "core.txt": CORE.replace("vmhba1:C0:T0:L1", "vmhba1:C0:T0:L99999999999999999999")},
        [],
        "core.txt",
        "line 3",
        "is not vmhbaA:CC:TT:LL",
    ),
    (
        "multipath-polling-zero",
        "multipath",
        {"ll.txt": LL, "m.conf": _conf("polling_interval 0")},
        [],
        "m.conf",
        "line 2",
        "polling_interval '0' is not a whole number of seconds in 1..1,000,000",
    ),
    (
        "multipath-polling-1e400",
        "multipath",
        {"ll.txt": LL, "m.conf": _conf("polling_interval 1e400")},
        [],
        "m.conf",
        "line 2",
        "polling_interval '1e400' is not a whole number",
    ),
    (
        "multipath-retry-negative",
        "multipath",
        {"ll.txt": LL, "m.conf": _conf("no_path_retry -3")},
        [],
        "m.conf",
        "line 2",
        "no_path_retry '-3' is not queue, fail or a whole number",
    ),
    (
        "multipath-failback-negative",
        "multipath",
        {"ll.txt": LL, "m.conf": _conf("failback -5")},
        [],
        "m.conf",
        "line 2",
        "failback must be immediate, manual, followover or a whole number of seconds > 0, got '-5'",
    ),
    (
        "multipath-failback-huge",
        "multipath",
        {"ll.txt": LL, "m.conf": _conf("failback 99999999999999999999")},
        [],
        "m.conf",
        "line 2",
        "failback must be immediate, manual, followover or a whole number of seconds > 0",
    ),
    (
        "mpclaim-weight-past-int32",
        "mpclaim",
        {"d0.txt": DISK0.replace("003|000|001|000   0", "003|000|001|000   99999999999")},
        [],
        "d0.txt",
        "line 8",
        "path weight 99999999999 is more than 2,147,483,647",
    ),
    (
        "nvme-controller-past-int64",
        "nvme",
        {"n.txt": NVME.replace(" +- nvme3 ", " +- nvme99999999999999999999 ")},
        [],
        "n.txt",
        "line 12",
        "expected a controller line",
    ),
    # text pasted into a policy spec: a ',' would add a key
    (
        "multipath-failback-adds-a-key",
        "multipath",
        {"ll.txt": LL, "m.conf": _conf("failback 30,path_grouping_policy=multibus")},
        [],
        "m.conf",
        "line 2",
        "got '30,path_grouping_policy=multibus'",
    ),
    (
        "esxcli-preferred-adds-a-key",
        "esxcli",
        {
            "dev.txt": DEVICES.replace("{preferred=vmhba32:C0:T0:L0;", "{preferred=vmhba1:C0:T0:L1,use_ano=1;").replace(
                "VMW_SATP_LOCAL\n", "VMW_SATP_ALUA\n", 1
            ),
            "core.txt": CORE,
        },
        ["--device", "mpx.vmhba32:C0:T0:L0"],
        "dev.txt",
        "line 6",
        "preferred='vmhba1:C0:T0:L1,use_ano=1' is not a runtime name",
    ),
    # a name the scenario would read otherwise: {lun} is filled in path names
    (
        "multipath-braces-in-a-device-node",
        "multipath",
        {"ll.txt": LL.replace(" sdb ", " sd{lun} ")},
        [],
        "ll.txt",
        "line 4",
        "device node 'sd{lun}' is not a name a host prints",
    ),
    (
        "esxcli-control-character",
        "esxcli",
        {"dev.txt": DEVICES.replace(NAA1 + "\n", NAA1 + "\x0bseed = 666\n", 1), "core.txt": CORE},
        [],
        "dev.txt",
        "line 11",
        "holds the control character U+000B",
    ),
    # a 200,000-character line, binary files, /dev/zero: for every kind
    *[
        (
            f"{kind}-long-line",
            kind,
            {"big.txt": "x" * 200_000 + "\n"},
            [],
            "big.txt",
            "line 1",
            "200,000 characters long: not a line of a captured output",
        )
        for kind in IMPORT_KINDS
    ],
    *[
        (f"{kind}-binary", kind, {"bin.txt": b"\x7fELF\x02\x01\x01\x00" + bytes(range(256))}, [], "bin.txt", "line 2", "not text (byte 0x80)")
        for kind in IMPORT_KINDS
    ],
    *[(f"{kind}-dev-zero", kind, {"/dev/zero": None}, [], "/dev/zero", "line 1", "not text (a NUL byte: a binary file?)") for kind in IMPORT_KINDS],
    ("nvme-empty", "nvme", {"e.txt": "\n \n"}, [], "e.txt", "", "is empty"),
    (
        "nvme-utf16-binary",
        "nvme",
        {"u.txt": b"\xff\xfe" + "nvme-subsys0 - NQN=x\n".encode("utf-16-le") + b"\x00\xd8"},
        [],
        "u.txt",
        "line 2",
        "not text",
    ),
    # duplicate names: the second would silently replace or move the first
    (
        "esxcli-runtime-name-twice",
        "esxcli",
        {"dev.txt": DEVICES, "core.txt": CORE.rstrip("\n") + "\n\n" + _core_block(0).replace(NAA1, NAA1[:-1] + "f") + "\n"},
        [],
        "core.txt",
        "line 309",
        "runtime name vmhba1:C0:T0:L1 is listed twice (the first is line 3)",
    ),
    (
        "esxcli-device-twice",
        "esxcli",
        {"dev.txt": DEVICES.rstrip("\n") + "\n\n" + DEVICES.split("\n\n")[1] + "\n", "core.txt": CORE},
        [],
        "dev.txt",
        "line 31",
        f"device {NAA1} is listed twice (the first is line 11)",
    ),
    (
        "esxcli-key-twice",
        "esxcli",
        {"dev.txt": DEVICES.replace("   Is USB: false\n", "   Is USB: false\n   Working Paths: vmhba1:C0:T0:L1\n", 2), "core.txt": CORE},
        [],
        "dev.txt",
        "line 10",
        "a second 'Working Paths:' line for device mpx.vmhba32:C0:T0:L0 (the first is line 8)",
    ),
    (
        "esxcli-path-of-two-devices",
        "esxcli",
        {"dev.txt": DEVICES, "core.txt": CORE, "nmp.txt": _text("esxcli-nmp-path-list.txt").replace(f"Device: {NAA1}", f"Device: {NAA1[:-1]}f", 1)},
        [],
        "nmp.txt",
        "",
        "is a path of",
    ),
    (
        "multipath-map-twice",
        "multipath",
        {"ll.txt": LL + LL.replace("dm-0", "dm-1").replace(" sd", " sx")},
        [],
        "ll.txt",
        "line 9",
        "map 3600a098038314c4a433f5774717a3046 (3600a098038314c4a433f5774717a3046) is listed twice (the first is line 1)",
    ),
    (
        "multipath-device-node-twice",
        "multipath",
        {"ll.txt": LL.replace("12:0:0:0 sdc", "12:0:0:0 sdb")},
        [],
        "ll.txt",
        "line 8",
        "path sdb is listed twice (the first is line 4)",
    ),
    (
        "nvme-controller-twice",
        "nvme",
        {"n.txt": NVME.replace(" +- nvme3 ", " +- nvme0 ")},
        [],
        "n.txt",
        "line 12",
        "controller nvme0 is listed twice (the first is line 9)",
    ),
    (
        "nvme-subsystem-twice",
        "nvme",
        {"n.txt": NVME + NVME.replace("nvme-subsys0", "nvme-subsys1").replace(" +- nvme", " +- nvme1")},
        [],
        "n.txt",
        "line 13",
        "is listed twice (the first is line 1)",
    ),
    (
        "mpclaim-path-twice",
        "mpclaim",
        {"d0.txt": DISK0.replace("0000000077020000 Active/Unoptimized 002|000|000|000", "0000000077030001 Active/Unoptimized 002|000|000|000")},
        [],
        "d0.txt",
        "line 14",
        "lists path 0000000077030001 (002|000|000|000) twice (the first is line 8)",
    ),
    # multipath.conf patterns: RE2 (linear time) or a located refusal
    (
        "multipath-backreference",
        "multipath",
        {"ll.txt": LL, "m.conf": _device_conf("(N)\\1", ".*")},
        [],
        "m.conf",
        "line 3",
        "vendor '(N)\\\\1' is not a POSIX extended regular expression pathsel can match",
    ),
    (
        "multipath-unclosed-group",
        "multipath",
        {"ll.txt": LL, "m.conf": _device_conf("NETAPP", "(LUN")},
        [],
        "m.conf",
        "line 4",
        "product '(LUN' is not a POSIX extended regular expression",
    ),
    # fio's job options given with --workload: '²' passes str.isdigit
    (
        "fio-superscript-iodepth",
        "nvme",
        {"n.txt": NVME, "fio.json": FIO.replace('"iodepth" : "32"', '"iodepth" : "3²"')},
        ["--workload", "fio.json"],
        "fio.json",
        "jobs[0].job options.iodepth",
        "valid integer",
    ),
    (
        "fio-iodepth-past-int64",
        "nvme",
        {"n.txt": NVME, "fio.json": FIO.replace('"iodepth" : "32"', '"iodepth" : "' + "9" * 5000 + '"')},
        ["--workload", "fio.json"],
        "fio.json",
        "jobs[0].job options.iodepth",
        "valid integer",
    ),
    # a line built to make a backtracking regular expression take quadratic time (a run of spaces), and more
    # controllers than a device can have paths: one message each, before any scenario is written
    (
        "multipath-run-of-spaces",
        "multipath",
        {"ll.txt": "`- 1:0:0:0 sda 8:0 active a" + " " * 16_000 + "b c\n" + LL},
        [],
        "ll.txt",
        "line 1",
        "a path line before any path group line",
    ),
    (
        "nvme-too-many-controllers",
        "nvme",
        {"n.txt": "nvme-subsys0 - NQN=nqn.x\n\\\n" + "".join(f" +- nvme{i} tcp a live optimized\n" for i in range(1025))},
        [],
        "n.txt",
        "",
        "1,025 paths to one volume: more than the 1,024 paths per device pathsel simulates",
    ),
    # the command line
    ("host-not-utf8", "nvme", {"n.txt": NVME}, ["--host", "h\udcff"], "command line", "--host", "is not text"),
    # issue 50: one target port group in two ALUA states for one LUN (the first seen was kept, silently)
    (
        "esxcli-one-tpg-two-states",
        "esxcli",
        {"dev.txt": ALT_DEV, "core.txt": ALT_CORE, "nmp.txt": ALT_NMP.replace(*_ANO_IN_TPG1, 1)},
        [],
        "nmp.txt",
        "line 14",
        f"device {NAA_ALT}'s target port group TPG_id=1 is ANO here but AO on line 5: a LUN has one ALUA state per target port group",
    ),
    (
        "mpclaim-one-tpg-two-states",
        "mpclaim",
        {
            "d0.txt": ALT_DISK0.replace("TPG_State : Active/Unoptimized, TPG_Id: 2, : 257", "TPG_State : Active/Unoptimized, TPG_Id: 1, : 257"),
            "d1.txt": ALT_DISK1,
        },
        [],
        "d0.txt",
        "line 12",
        "MPIO Disk0's target port group TPG_Id 1 is ANO here but AO on line 8",
    ),
    # issue 50: an imported scenario that validation refuses is located in the capture, not at "<imported>: hosts[0]"
    (
        "esxcli-dsnro-without-dqlen",
        "esxcli",
        {"dev.txt": ALT_DEV, "core.txt": ALT_CORE, "cd.txt": _text("esxcli-core-device-list.txt").replace("   Device Max Queue Depth: 64\n", "")},
        [],
        "cd.txt",
        "line 30",
        "No of outstanding IOs with competing worlds without a Device Max Queue Depth line",
    ),
    # issue 50: fio options that are not objects (a TypeError)
    (
        "fio-job-options-list",
        "nvme",
        {"n.txt": NVME, "fio.json": re.sub(r'"job options" : \{[^}]*\}', '"job options" : ["rw", "randread"]', FIO, count=1)},
        ["--workload", "fio.json"],
        "fio.json",
        "jobs[0].job options",
        "must be a JSON object of fio's options, got a list",
    ),
    (
        "fio-global-options-list",
        "nvme",
        {"n.txt": NVME, "fio.json": re.sub(r'"global options" : \{[^}]*\}', '"global options" : [1]', FIO, count=1)},
        ["--workload", "fio.json"],
        "fio.json",
        "global options",
        "must be a JSON object of fio's options, got a list",
    ),
]


def _materialise(files: dict[str, str | bytes | None], where: Path) -> list[str]:
    out = []
    for name, content in files.items():
        if content is None:
            out.append(name)
            continue
        p = where / name
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")
        out.append(name)
    return out


@pytest.mark.parametrize(("kind", "files", "extra", "file", "place", "fragment"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_a_hostile_capture_gets_one_located_line(kind, files, extra, file, place, fragment, tmp_path):
    captures = [name for name in _materialise(files, tmp_path) if name not in extra]  # a --workload file is no capture
    args = [*_pathsel(), "import", kind, *captures, *extra, "-o", "out.toml"]
    # the timeout only stops a hang from stalling the suite (the regex cases): it is no measure of speed
    run = subprocess.run(args, cwd=tmp_path, capture_output=True, timeout=300, env={**os.environ, "PYTHONIOENCODING": "utf-8:surrogateescape"})
    err = run.stderr.decode("utf-8", "replace")
    assert run.returncode == 2, err
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith(f"pathsel: error: {file}: {place + ': ' if place else ''}"), err
    assert fragment in err, err
    assert not (tmp_path / "out.toml").exists()


# (id, kind, files, extra args, what the scenario must hold): valid input pathsel refused or mishandled before
GOOD = [
    (
        "multipath-no-path-retry-0-is-fail",
        "multipath",
        {"ll.txt": LL, "m.conf": _conf("no_path_retry 0", "polling_interval 10")},
        [],
        {"apd_timeout": "1ms", "detection": "10s"},
    ),
    (
        "multipath-no-path-retry-12",
        "multipath",
        {"ll.txt": LL, "m.conf": _conf("no_path_retry 12", "polling_interval 10")},
        [],
        {"apd_timeout": "120s"},
    ),
    ("multipath-no-path-retry-past-any-run", "multipath", {"ll.txt": LL, "m.conf": _conf("no_path_retry 2147483647")}, [], {"apd_timeout": "queue"}),
    ("multipath-failback-0-is-unset", "multipath", {"ll.txt": LL, "m.conf": _conf("failback 0")}, [], {"spec": "dm:service-time:failback=immediate"}),
    (
        "multipath-catastrophic-product-pattern",
        "multipath",
        {"ll.txt": LL.replace("NETAPP,LUN C-Mode", "NETAPP," + "a" * 10_000 + "c"), "m.conf": _device_conf("NETAPP", "(a+)+b", "failback 20")},
        [],
        {"spec": "dm:service-time"},
    ),
    (
        "multipath-pattern-matches-as-regexec",
        "multipath",
        {"ll.txt": LL, "m.conf": _device_conf("^NET", "LUN C-(Mode|Other)$", "failback 20")},
        [],
        {"spec": "dm:service-time:failback=20"},
    ),
    (
        "multipath-polling-interval-in-devices-is-ignored",
        "multipath",
        {"ll.txt": LL, "m.conf": _device_conf("NETAPP", "LUN", "polling_interval 99")},
        [],
        {"detection": "dm"},
    ),
    ("host-with-a-newline", "nvme", {"n.txt": NVME}, ["--host", 'h\nseed = 666\n[x]\n"'], {"host": 'h\nseed = 666\n[x]\n"'}),
    ("capture-name-with-a-newline", "nvme", {'n\nseed = 666\n".txt': NVME}, [], {"source": 'pathsel import nvme: n\nseed = 666\n".txt'}),
]


@pytest.mark.parametrize(("kind", "files", "extra", "want"), [c[1:] for c in GOOD], ids=[c[0] for c in GOOD])
def test_valid_input_imports_as_multipath_tools_reads_it(kind, files, extra, want, tmp_path):
    args = [*_pathsel(), "import", kind, *_materialise(files, tmp_path), *extra, "-q", "-o", "out.toml"]
    run = subprocess.run(args, cwd=tmp_path, capture_output=True, timeout=300)
    assert run.returncode == 0, run.stderr.decode()
    doc = tomllib.loads((tmp_path / "out.toml").read_text(encoding="utf-8"))
    assert "seed" not in doc and set(doc) <= TOP_KEYS
    host = doc["hosts"][0]
    for key, value in want.items():
        if key == "spec":
            assert [p["spec"] for p in doc["policies"]] == [value]
        elif key == "host":
            assert host["name"] == value and len(doc["hosts"]) == 1
        elif key == "source":
            assert doc["source"] == value
        else:
            assert host.get(key) == value, host


# -- the property -------------------------------------------------------------------------------------------

TOP_KEYS = {"name", "source", "protocol", "duration", "arrays", "replication", "hosts", "volumes", "paths", "workloads", "policies"}
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_BREAKS = re.compile("[\x00-\x08\x0a-\x1f\x7f\x85\u2028\u2029]")  # what a capture's line may not hold (read_source)
_LINE = re.compile(r"^(#.*|\[\[(arrays|hosts|volumes|paths|workloads|policies)\]\]( *#.*)?|\[replication\]( *#.*)?|[a-z_]+ = \S.*|)$")


def _name_ok(name: str) -> bool:
    """What pathsel.scenario.systems.text.check_name takes."""
    return bool(name) and name.isprintable() and "{" not in name and "}" not in name


def _seen(text: str, eol: bool = False) -> str:
    """``text`` as read_source passes it on: a "\\r" before the line's end is half a CRLF, then ANSI codes dropped."""
    return _ANSI.sub("", text[:-1] if eol and text.endswith("\r") else text)


# file names: no "/" and no NUL (the file system's), at most 100 characters
file_names = st.text(st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)), min_size=1, max_size=60).filter(
    lambda s: s not in (".", "..") and len(s.encode()) < 200
)
# half the draws from any Unicode text (control and format characters, line and paragraph separators, quotes,
# brackets), half from printable text, so that both outcomes, refused and imported, are searched
printable = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Cf", "Co", "Cn", "Zl", "Zp")), max_size=30)
anything = st.one_of(st.text(max_size=30), printable)
no_space = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc")), min_size=1, max_size=30),
    st.text(st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc", "Cf", "Co", "Cn")), min_size=1, max_size=30),
)


def _outcome(ok: bool, *at_eol: str, mid: list[str] | tuple[str, ...] = ()) -> bool | None:
    """True: the import must succeed with these names; False: it must be refused; None: a field holds a line break,
    which splits its line: the rest may be a line the reader takes (a blank one) or refuses, so either outcome is
    right, and only what no capture can change is checked (the host, the keys, the lines)."""
    if any(_BREAKS.search(_seen(x, eol=True)) for x in at_eol) or any(_BREAKS.search(_seen(x)) for x in mid):
        return None
    return ok


def _esxcli(draw: st.DrawFn) -> tuple[dict[str, str], dict[str, object]]:
    device = draw(st.one_of(no_space, anything).filter(lambda s: _seen(s)[:1].strip() != ""))
    display, target = draw(anything), draw(anything)
    device_list = (
        "mpx.vmhba32:C0:T0:L0\n   Storage Array Type: VMW_SATP_LOCAL\n   Path Selection Policy: VMW_PSP_FIXED\n\n"
        f"{device}\n   Device Display Name: {display}\n   Storage Array Type: VMW_SATP_ALUA\n"
        "   Path Selection Policy: VMW_PSP_RR\n   Path Selection Policy Device Config: {policy=iops,iops=7,bytes=10485760,useANO=0; lastPathIndex=0}\n"
        "   Working Paths: vmhba1:C0:T0:L3, vmhba2:C0:T0:L3\n"
    )
    core = "".join(
        f"fc.{h}-{device}\n   Runtime Name: vmhba{h}:C0:T0:L3\n   Device: {device}\n   State: active\n"
        f"   Target Identifier: fc.524a937a8f0a2b00:524a937a8f0a2b1{h}\n   Target Transport Details: {target}\n\n"
        for h in (1, 2)
    )
    seen = _seen(device, eol=True).strip()
    ok = _name_ok(seen) and not seen.startswith("mpx.")
    ok = ok and not any(word in device for word in ("Path Selection Policy:", "Storage Array Type:", "Group State:"))  # each names a list
    expect = {
        "ok": _outcome(ok, device, display, target),
        "volumes": seen,
        "paths": ["vmhba1:C0:T0:L3", "vmhba2:C0:T0:L3"],
        "policies": ["rr:iops=7"],
        "arrays": 1,
    }
    return {"device list": device_list, "core path list": core}, expect


def _multipath(draw: st.DrawFn) -> tuple[dict[str, str], dict[str, object]]:
    plain = st.one_of(
        st.text(
            st.characters(blacklist_categories=("Cs",), blacklist_characters=" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0()"), min_size=1, max_size=20
        ),
        st.text(st.characters(blacklist_categories=("Cs", "Cc", "Cf", "Co", "Cn", "Z"), blacklist_characters="(){}|`"), min_size=1, max_size=20),
    )
    name, wwid = draw(plain), draw(plain)
    vendor = draw(anything.map(lambda s: s.replace(",", "")))
    product = draw(anything)
    nodes = [draw(plain), draw(plain)]
    ll = (
        f"{name} ({wwid}) dm-0 {vendor},{product}\nsize=1G features='0' hwhandler='1 alua' wp=rw\n"
        "`-+- policy='round-robin 0' prio=50 status=active\n"
        f"  |- 1:0:0:5 {nodes[0]} 8:16 active ready running\n  `- 2:0:0:5 {nodes[1]} 8:32 active ready running\n"
    )
    seen = [_seen(x) for x in (name, wwid, *nodes)]
    ok = (
        all(_name_ok(x) and x.strip() == x and not re.search(r"\s", x, re.ASCII) for x in seen)
        and not re.fullmatch(r"[a-z]+:", seen[0])
        and not seen[0].startswith(("size=", "|", "`"))
        and seen[2] != seen[3]
        and ")" not in seen[1]
    )
    expect = {
        "ok": _outcome(ok, product, mid=[name, wwid, vendor, *nodes]),
        "volumes": seen[0],
        "paths": seen[2:],
        "policies": None,
        "arrays": 1,
    }
    return {"multipath -ll": ll}, expect


def _nvme(draw: st.DrawFn) -> tuple[dict[str, str], dict[str, object]]:
    nqn, model, addr = draw(no_space), draw(anything), draw(no_space)
    text = (
        f"nvme-subsys4 - NQN={nqn}\n               model={model}\n               iopolicy=queue-depth\n\\\n"
        f" +- nvme7 tcp {addr} live optimized\n +- nvme8 rdma {addr} live non-optimized\n"
    )
    ok = _name_ok(_seen(nqn, eol=True)) and not re.search(r"\s", _seen(nqn, eol=True), re.ASCII) and not re.search(r"\s", _seen(addr), re.ASCII)
    expect = {
        "ok": _outcome(ok, nqn, model, mid=[addr]),
        "volumes": "nvme-subsys4",
        "paths": ["nvme7", "nvme8"],
        "policies": ["nvme:queue-depth"],
        "arrays": 1,
    }
    return {"nvme list-subsys": text}, expect


def _mpclaim(draw: st.DrawFn) -> tuple[dict[str, str], dict[str, object]]:
    serial, alua = draw(anything), draw(anything.map(lambda s: s.replace(",", "")))
    text = (
        f"MPIO Disk3: 02 Paths, Least Queue Depth, {alua}\n    SN: {serial}\n\n"
        "    0000000077030001 Active/Optimized   003|000|001|007   0\n"
        "    0000000077020001 Active/Unoptimized 002|000|001|007   0\n"
    )
    ok = _outcome(_seen(alua, eol=True).strip() != "", serial, alua)  # "Depth," ends no disk line
    expect = {"ok": ok, "volumes": "MPIO Disk3", "paths": ["0000000077030001", "0000000077020001"], "policies": ["mpio:lqd"], "arrays": 1}
    return {"mpclaim -s -d 3": text}, expect


BUILDERS = {"esxcli": _esxcli, "multipath": _multipath, "nvme": _nvme, "mpclaim": _mpclaim}


@st.composite
def imports(draw: st.DrawFn) -> tuple[str, str, list[str], dict[str, str], dict[str, object]]:
    kind = draw(st.sampled_from(sorted(BUILDERS)))
    contents, expect = BUILDERS[kind](draw)
    names = draw(st.lists(file_names, min_size=len(contents), max_size=len(contents), unique=True))
    host = draw(st.one_of(st.text(max_size=40), st.sampled_from(["h\nseed = 666", 'x"\n[[hosts]]\nname = "y', "\u2028#", ""])))
    files = dict(zip(names, contents.values(), strict=True))
    return kind, host, names, files, expect


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(imports())
def test_no_name_reaches_the_scenario_but_as_its_own_value(case):
    kind, host, names, files, expect = case
    event(f"{kind}: {({True: 'imports', False: 'refused', None: 'either'})[expect['ok']]}")  # --hypothesis-show-statistics: both outcomes are drawn
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for name, text in files.items():
            p = Path(tmp) / name
            p.write_text(text, encoding="utf-8")
            paths.append(p)
        try:
            imp = import_outputs(kind, paths, host=host)
        except ScenarioError as e:
            assert expect["ok"] is not True, f"refused a valid capture: {e}"
            assert e.source and e.problem and "\n" not in e.problem
            assert e.source == "command line" or e.source in {str(p) for p in paths} or e.source == "<imported>"
            return
    assert expect["ok"] is not False, "took a capture it should refuse"
    doc = tomllib.loads(imp.text)
    want_host = host or IMPORT_KINDS[kind][1]
    # no key an input did not earn: the top level, the one host, and the lines themselves
    assert set(doc) <= TOP_KEYS and "seed" not in doc
    assert [h["name"] for h in doc["hosts"]] == [want_host] and set(doc["hosts"][0]) <= {"name", "detection", "apd_timeout"}
    assert imp.scenario.model.hosts[0].name == want_host
    assert doc["name"].startswith(f"{want_host}: ")
    assert imp.text.splitlines() == imp.text.split("\n")[:-1]  # no value or comment holds a line end of any kind
    for line in imp.text.split("\n"):  # every line a comment, a table header or one key: none a user's
        assert _LINE.match(line), line
    if expect["ok"] is None:
        return
    assert doc["name"] == f"{want_host}: {expect['volumes']}"
    assert doc["source"] == f"pathsel import {kind}: " + ", ".join(str(p) for p in paths)
    assert [p["name"] for p in doc["paths"]] == expect["paths"]
    assert all(set(p) <= {"name", "array", "alua", "weight", "one_way_latency"} for p in doc["paths"])
    assert len(doc["arrays"]) == expect["arrays"] and "volumes" not in doc
    if expect["policies"] is not None:
        assert [p["spec"] for p in doc["policies"]] == expect["policies"]
    assert [w["name"] for w in doc["workloads"]] == ["job"]


@pytest.mark.parametrize("recorded", [True, False], ids=["origin-recorded", "no-origin"])
def test_an_imported_scenario_refused_names_the_capture(recorded, tmp_path, monkeypatch):
    """Issue 50: whatever the importer writes that validation refuses is located in the capture it came from
    (the line the importer recorded), else named by the captures: never '<imported>: hosts[0]'."""
    import pathsel.scenario.systems as systems

    real = systems._check_size

    def spoil(sk, where):  # a value validation refuses, as if a capture had given it
        real(sk, where)
        sk.queue_depth = 0
        if recorded:
            sk.origins["hosts[0].queue_depth"] = (sk.sources[0], 7)

    monkeypatch.setattr(systems, "_check_size", spoil)
    dev, core = tmp_path / "dev.txt", tmp_path / "core.txt"
    dev.write_text(DEVICES)
    core.write_text(CORE)
    with pytest.raises(ScenarioError) as info:
        import_outputs("esxcli", [dev, core])
    err = info.value
    assert "<imported>" not in str(err) and "\n" not in str(err)
    if recorded:
        assert (err.source, err.place) == (str(dev), "line 7")
        assert err.problem.endswith("(the imported scenario's hosts[0].queue_depth)")
    else:
        assert (err.source, err.place) == (f"{dev}, {core}", "")
        assert err.problem.startswith("the scenario imported from this output is refused at hosts[0].queue_depth: ")
