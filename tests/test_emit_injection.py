"""``--emit`` cannot be injected: every name a user gives arrives as one value, and nothing else runs (issue 38).

Each emitter's output is read the way its consumer reads it, by a reader of
this file's own (not pathsel's, so a bug shared by writer and reader would
not hide):

* esxcli and SATP rules: ``bash -n``, then bash itself runs the text with
  ``esxcli`` a stand-in function that records its argv, PATH emptied (any
  other command is recorded by ``command_not_found_handle``), ``set -u``, a
  DEBUG trap recording every command bash runs, in an empty directory that
  must stay empty. Every example is also split with ``shlex`` (POSIX rules,
  comments on). Bash runs once per test for all examples (a file each).
* udev: a parser of the rule line grammar, after udev(7) (systemd, 2024,
  https://www.freedesktop.org/software/systemd/man/latest/udev.html) and
  systemd's ``src/udev/udev-rules.c`` (``udev_rule_parse_value``: a value
  ends at a ``"`` not after a ``\\``).
* multipath.conf: a parser after multipath-tools' ``libmpathutil/parser.c``
  (``read_line``: ``fgets`` into 1024 bytes, the line cut at ``\\n``/``\\r``;
  ``alloc_strvec``: the tokens; ``process_stream``/``validate_config_strvec``:
  sections and values), https://github.com/opensvc/multipath-tools, on bytes.
* PowerShell (``pwsh`` is not installable here): a tokenizer after
  Microsoft's "about_Quoting_Rules", "about_Comments" and "about_Parsing"
  (PowerShell 7.4, 2024) and the PowerShell Language Specification 3.0,
  2.2 and 2.3.5.2 (2012): lines end at CR or LF; ``#`` starts a comment at a
  token's start, ``<#`` a block comment; single-quote characters are ``'``
  and U+2018 to U+201B, doubled inside a string.

The Hypothesis tests draw every value an emitter writes (device, vendor,
model, SATP, FIXED's preferred path, the header's label and results file
name) from all of Unicode (surrogates aside, which Python strings cannot
pass to a file) with the characters that matter to shells and config files
weighted in. A value is either written and arrives as itself, or refused
with one located line; ``must_refuse`` says which (the contract, written
out). PATHSEL_EXAMPLES sets the examples per test (default 200).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pathsel.cli import main
from pathsel.cli.systems import emit_recommended, emit_simulate
from pathsel.errors import ScenarioError
from pathsel.policies.spec import PolicySpec, parse_spec
from pathsel.scenario.runs import RunSpec
from pathsel.scenario.systems import emit, read_emitted
from pathsel.scenario.systems.quoting import NAME_LIMIT, ps_quote

from .conftest import SIMS

EXAMPLES = int(os.environ.get("PATHSEL_EXAMPLES", "200"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
BASH = shutil.which("bash")
PATHSEL = Path(sys.executable).parent / "pathsel"  # the installed command, as users run it

# what shells, udev, multipath.conf and PowerShell give meaning to; then what ends a line somewhere, or cannot be written
SPECIAL = "'\"$`;&|<>(){}[]*?#!\\ %=,-~.:/@^+\u2018\u2019\u201a\u201b\u201c\u201d\u2013\ufeff\u202e\u00a0"
BREAKS = "\t\n\r\x00\x0b\x0c\x1c\x1e\x85\u2028\u2029\x1b"
names = st.one_of(
    st.text(),  # every Unicode category but surrogates
    st.lists(st.one_of(st.sampled_from(SPECIAL), st.text(st.characters(exclude_categories=("Cc", "Cs", "Zl", "Zp")))), min_size=1, max_size=12).map(
        "".join
    ),  # written, with what shells read
    st.text(st.one_of(st.sampled_from(SPECIAL + BREAKS), st.characters()), min_size=1, max_size=40),  # often refused
    st.from_regex(r"[A-Za-z0-9._:-]{1,40}", fullmatch=True),  # plain names: must be written
    st.text(st.characters(), min_size=NAME_LIMIT - 2, max_size=NAME_LIMIT + 2),  # around the length limit
)


# -- the contract: what must be refused ------------------------------------------------------------------------


def must_refuse(value: str, kind: str) -> bool:
    """Whether ``value`` cannot be written into ``kind`` (``sh``, ``sh-word``, ``udev``, ``mpconf``)."""
    if not value.strip() or len(value) > NAME_LIMIT:
        return True
    if any(unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") for c in value):  # line breaks, NUL, controls
        return True
    if any("\u202a" <= c <= "\u202e" or "\u2066" <= c <= "\u2069" for c in value):  # bidi overrides reorder the shown line
        return True
    if kind == "sh-word":
        return value.startswith("-")
    if kind == "udev":
        return any(c in value for c in '"\\$%*?[]|')
    if kind == "mpconf":
        return '"' in value or len(value.encode()) > 976
    return False


def not_a_path(value: str) -> bool:
    """Whether esxcli's ``--path`` must refuse ``value``: a template (a brace) or a nexus (no LUN), which no host has."""
    return "{" in value or re.fullmatch(r"vmhba[0-9]{1,9}:C[0-9]{1,9}:T[0-9]{1,9}", value) is not None


def attempt(make: Any, place: str) -> str | None:
    """The emitted text, or None when refused: then one located line naming ``place``."""
    try:
        return str(make())
    except ScenarioError as e:
        assert e.source == "command line" and e.place == place, (e.source, e.place, e.problem)
        assert len(str(e).splitlines()) == 1, str(e)
        return None


def lines_of(text: str) -> list[str]:
    """The text's lines; no character any reader takes as a line break (Python's splitlines) but the \\n ending each."""
    assert text.endswith("\n")
    lines = text.split("\n")[:-1]
    assert text.splitlines() == lines, [ln for ln in text.splitlines() if ln not in lines][:3]
    return lines


def args_for(kind: str, **opts: Any) -> argparse.Namespace:
    return argparse.Namespace(
        emit=kind, device=opts.get("device"), vendor=opts.get("vendor"), model=opts.get("model"), satp=opts.get("satp", "VMW_SATP_ALUA")
    )


def simulate_text(kind: str, label: str, spec: PolicySpec | str, **opts: Any) -> str:
    """What ``pathsel simulate --emit KIND`` prints for a one-policy scenario whose run is labelled ``label``."""
    policy = spec if isinstance(spec, PolicySpec) else parse_spec(spec)[0]
    scenario: Any = SimpleNamespace(runs=(RunSpec(label=label, policy=policy),))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert emit_simulate(args_for(kind, **opts), scenario) == 0
    return out.getvalue()


def recommend_text(kind: str, results: str, label: str, spec: str, **opts: Any) -> str:
    """What ``pathsel recommend RESULTS --emit KIND`` prints when ``label`` (``spec``) is recommended."""
    rec: Any = SimpleNamespace(
        metrics={"iops": SimpleNamespace(spec=spec, recommended=label), "p99": SimpleNamespace(spec="mru", recommended=label + "2")}
    )
    args = args_for(kind, **opts)
    args.results = results
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert emit_recommended(args, rec) == 0
    return out.getvalue()


def header_lines(text: str, count: int) -> list[str]:
    """The text after its ``count`` header lines, each one ``#`` comment line."""
    lines = lines_of(text)
    assert all(ln.startswith("# ") for ln in lines[:count]), lines[:count]
    return lines[count:]


# -- POSIX shell: shlex, then bash for real ---------------------------------------------------------------------


def shell_calls(text: str) -> list[list[str]]:
    """The esxcli calls a shell line by line makes of ``text`` (POSIX rules; ``#`` comments), checked to be only esxcli."""
    calls = []
    for line in lines_of(text):
        words = shlex.split(line, comments=True)
        if words:
            assert words[0] == "esxcli", line
            calls.append(words[1:])
    return calls


class BashBatch:
    """Texts to run with bash at the end of a test, each with the esxcli calls it must make and nothing else."""

    def __init__(self) -> None:
        self.cases: list[tuple[str, list[list[str]]]] = []

    def add(self, text: str, calls: list[list[str]]) -> None:
        self.cases.append((text, calls))

    def run(self, tmp: Path) -> None:
        if BASH is None:
            pytest.skip("no bash")
        cases = tmp / "cases"
        work = tmp / "work"  # the directory the texts run in: nothing may appear in it
        cases.mkdir()
        work.mkdir()
        files = []
        for i, (text, _) in enumerate(self.cases):
            f = cases / f"{i}.sh"
            f.write_text(text, encoding="utf-8")
            files.append(str(f))
        driver = tmp / "driver.sh"
        driver.write_text(
            'exec 3>"$OUT/calls" 4>"$OUT/ran" 5>"$OUT/syntax"\n'
            "set -u\n"
            "B=$BASH\n"
            "PATH=/nonexistent-pathsel-emit-test\n"
            'esxcli() { printf \'%s\\0\' "$#" "$@" >&3; }\n'
            "command_not_found_handle() { printf '%s\\0' \"NOTFOUND $1\" >&4; return 127; }\n"
            # the cases by number, not as arguments: "$@" holding thousands of names makes every . and call slow
            "N=$1; set --\n"
            "for ((i = 0; i < N; i++)); do\n"
            "  f=$OUT/cases/$i.sh\n"
            '  "$B" -n "$f" 2>/dev/null || printf \'%s\\0\' "$f" >&5\n'
            "  printf '%s\\0' \"@@$f\" >&3; printf '%s\\0' \"@@$f\" >&4\n"
            # set -T: the DEBUG trap also sees commands in the sourced file, functions and command substitutions
            '  ( set -T; trap \'printf "%s\\0" "$BASH_COMMAND" >&4\' DEBUG; . "$f" ) </dev/null >/dev/null 2>&1\n'
            "done\n",
            encoding="utf-8",
        )
        subprocess.run(
            [BASH, str(driver), str(len(files))],
            cwd=work,
            env={"LC_ALL": "C.UTF-8", "OUT": str(tmp)},
            stdin=subprocess.DEVNULL,
            check=False,
            timeout=3600,
        )
        syntax = (tmp / "syntax").read_bytes().decode().split("\0")[:-1]
        assert not syntax, f"bash -n refused {len(syntax)}: {[self.cases[int(Path(s).stem)][0] for s in syntax[:3]]}"
        assert not list(work.iterdir()), f"the texts made files: {list(work.iterdir())[:5]}"
        calls = _by_case((tmp / "calls").read_bytes().decode().split("\0")[:-1])
        ran = _by_case((tmp / "ran").read_bytes().decode().split("\0")[:-1])
        for f, (text, expected) in zip(files, self.cases, strict=True):
            got, items = [], calls.get(f, [])
            while items:
                n = int(items[0])
                got.append(items[1 : 1 + n])
                items = items[1 + n :]
            assert got == expected, f"{text!r}: esxcli got {got}, expected {expected}"
            commands = ran.get(f, [])
            assert commands[:1] == ['. "$f"'], commands[:3]
            # every command bash ran: an esxcli line of the text, or the stand-in's own printf; nothing else
            others = [c for c in commands[1:] if not c.startswith("esxcli ") and c != _STAND_IN]
            assert not others, f"{text!r} ran {others}"


_STAND_IN = 'printf \'%s\\0\' "$#" "$@" 1>&3'  # the stand-in esxcli's body as the DEBUG trap shows it


def _by_case(items: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    key = None
    for item in items:
        if item.startswith("@@/"):
            key = item[2:]
            out[key] = []
        else:
            assert key is not None
            out[key].append(item)
    return out


def _rr(device: str) -> list[list[str]]:
    return [
        ["storage", "nmp", "device", "set", f"--device={device}", "--psp=VMW_PSP_RR"],
        ["storage", "nmp", "psp", "roundrobin", "deviceconfig", "set", f"--device={device}", "--type=iops", "--iops=1"],
    ]


def test_esxcli_values_arrive_as_one_argument_and_nothing_else_runs(tmp_path):
    batch = BashBatch()

    @SETTINGS
    @given(device=names, preferred=names, satp=names, label=names, results=names)
    def check(device: str, preferred: str, satp: str, label: str, results: str) -> None:
        # FIXED's preferred path and the device
        fixed = parse_spec("fixed", {"preferred": preferred})[0]
        text = attempt(lambda: emit(fixed, "esxcli", device=device), "--device" if must_refuse(device, "sh") else "--policy fixed:preferred")
        # "": no preference; a template or a nexus is no device's path (issue 48)
        assert (text is None) == (must_refuse(device, "sh") or (preferred != "" and (must_refuse(preferred, "sh") or not_a_path(preferred))))
        if text is not None:
            calls = [["storage", "nmp", "device", "set", f"--device={device}", "--psp=VMW_PSP_FIXED"]]
            if preferred:
                calls.append(["storage", "nmp", "psp", "fixed", "deviceconfig", "set", f"--device={device}", f"--path={preferred}"])
            assert shell_calls(text) == calls
            back = read_emitted("esxcli", text)
            assert (back.spec, back.device) == (fixed.text, device)
            batch.add(text, calls)
        # a SATP's default PSP
        text = attempt(lambda: emit("mru", "esxcli", satp=satp), "--satp")
        assert (text is None) == must_refuse(satp, "sh")
        if text is not None:
            calls = [["storage", "nmp", "satp", "set", f"--satp={satp}", "--default-psp=VMW_PSP_MRU"]]
            assert shell_calls(text) == calls
            assert read_emitted("esxcli", text).satp == satp
            batch.add(text, calls)
        # the headers pathsel simulate and pathsel recommend write: comments that stay one line each
        text = attempt(lambda: simulate_text("esxcli", label, "rr:iops=1", device="naa.1"), "")
        assert text is not None
        assert shell_calls(text) == _rr("naa.1") and len(header_lines(text, 2)) == 2
        batch.add(text, _rr("naa.1"))
        text = attempt(lambda: recommend_text("esxcli", results, label, "rr:iops=1", device="naa.1"), "")
        assert text is not None
        assert shell_calls(text) == _rr("naa.1") and len(header_lines(text, 3)) == 2
        batch.add(text, _rr("naa.1"))

    check()
    batch.run(tmp_path)


def test_satp_rule_values_arrive_as_one_argument_and_nothing_else_runs(tmp_path):
    batch = BashBatch()

    @SETTINGS
    @given(vendor=names, model=names, device=names, satp=names, label=names)
    def check(vendor: str, model: str, device: str, satp: str, label: str) -> None:
        bad = [w for w, v in (("--satp", satp), ("--vendor", vendor), ("--model", model)) if must_refuse(v, "sh-word")]
        if not (vendor and model):  # a rule needs both, checked before either is written
            bad.insert(0, "--emit satp-rule")
        text = attempt(lambda: emit("rr:iops=1", "satp-rule", vendor=vendor, model=model, satp=satp), bad[0] if bad else "")
        assert (text is None) == bool(bad)
        if text is not None:
            tail = ["-c", "tpgs_on"] if satp == "VMW_SATP_ALUA" else []
            calls = [["storage", "nmp", "satp", "rule", "add", "-s", satp, "-V", vendor, "-M", model, "-P", "VMW_PSP_RR", "-O", "iops=1", *tail]]
            calls[0] += ["-e", "pathsel rr:iops=1"]
            assert shell_calls(text) == calls
            back = read_emitted("satp-rule", text)
            assert (back.spec, back.vendor, back.model, back.satp) == ("rr:iops=1", vendor, model, satp)
            batch.add(text, calls)
        text = attempt(lambda: simulate_text("satp-rule", label, "mru", device=device, satp="VMW_SATP_DEFAULT_AA"), "--device")
        assert (text is None) == must_refuse(device, "sh-word")
        if text is not None:
            calls = [["storage", "nmp", "satp", "rule", "add", "-s", "VMW_SATP_DEFAULT_AA", "-d", device, "-P", "VMW_PSP_MRU", "-e", "pathsel mru"]]
            assert shell_calls(text) == calls and len(header_lines(text, 2)) == 1
            assert read_emitted("satp-rule", text).device == device
            batch.add(text, calls)

    check()
    batch.run(tmp_path)


# -- udev ------------------------------------------------------------------------------------------------------

_UDEV_OPS = ("==", "!=", "+=", "-=", ":=", "=")


def udev_rules(text: str) -> list[list[tuple[str, str, str]]]:
    """The rules of a rules file: (key, operator, value) per rule line, as udev reads them."""
    assert "\r" not in text and "\0" not in text  # systemd's read_line() also ends a line at these
    rules = []
    for line in lines_of(text):
        s = line.lstrip(" \t")
        if not s or s.startswith("#"):
            continue
        assert not s.endswith("\\"), "a continued line"
        pairs, i = [], 0
        while True:
            while i < len(s) and s[i] in " \t,":
                i += 1
            if i >= len(s):
                break
            j = i
            while j < len(s) and (s[j].isascii() and (s[j].isalnum() or s[j] == "_")):
                j += 1
            if j < len(s) and s[j] == "{":
                j = s.index("}", j) + 1
            key = s[i:j]
            assert key, f"no key at {s[i:]!r}"
            op = next((o for o in _UDEV_OPS if s.startswith(o, j)), None)
            assert op, f"no operator after {key!r}"
            j += len(op)
            assert s[j] == '"', f"{key}{op} value is not quoted"
            value, j = [], j + 1
            while s[j] != '"':  # udev_rule_parse_value: \" is a quote, the value ends at any other "
                if s[j] == "\\" and s[j + 1] == '"':
                    j += 1
                value.append(s[j])
                j += 1
            pairs.append((key, op, "".join(value)))
            i = j + 1
            assert i >= len(s) or s[i] in " \t,", f"{s[i:]!r} after a value"
        rules.append(pairs)
    return rules


def _udev_rule(match: tuple[str, str] | None, iopolicy: str) -> list[tuple[str, str, str]]:
    head = [("ACTION", "==", "add"), ("SUBSYSTEM", "==", "nvme-subsystem"), ("ATTR{subsystype}", "==", "nvm")]
    return head + ([(match[0], "==", match[1])] if match else []) + [("ATTR{iopolicy}", "=", iopolicy)]


@SETTINGS
@given(nqn=names, model=names, label=names)
def test_udev_rule_matches_exactly_the_value_given_and_sets_only_the_iopolicy(nqn, model, label):
    for key, option, value in (("ATTR{subsysnqn}", "--device", nqn), ("ATTR{model}", "--model", model)):
        opts = {"device": nqn} if option == "--device" else {"model": model}
        text = attempt(lambda: simulate_text("nvme-udev", label, "nvme:round-robin", **opts), option)  # noqa: B023
        assert (text is None) == must_refuse(value, "udev")
        if text is not None:
            assert udev_rules(text) == [_udev_rule((key, value), "round-robin")]
            # no glob, alternative or substitution: udev matches the value as given, character for character
            assert not any(c in value for c in "*?[]|$%")
            back = read_emitted("nvme-udev", text)
            assert (back.nqn, back.model) == ((value, None) if option == "--device" else (None, value))


# -- multipath.conf --------------------------------------------------------------------------------------------

QUOTE = object()
_SECTIONS = {b"defaults", b"blacklist", b"blacklist_exceptions", b"devices", b"device", b"multipaths", b"multipath", b"overrides", b"protocol"}
_SPACE = b" \t\n\v\f\r"


def mp_lines(data: bytes) -> list[bytes]:
    """read_line(): fgets() into 1024 bytes (so at most 1023 a read), then the line ends at its first \\n or \\r."""
    out, i = [], 0
    while i < len(data):
        nl = data.find(b"\n", i)
        end = min(len(data) if nl < 0 else nl + 1, i + 1023)
        chunk = data[i:end]
        i = end
        for stop in (b"\n", b"\r"):
            chunk = chunk.split(stop, 1)[0]
        out.append(chunk)
    return out


def mp_tokens(line: bytes) -> list[Any]:
    """alloc_strvec(): words, '{', '}' and QUOTE markers; outside quotes non-ASCII bytes are white space."""
    n, cp = len(line), 0

    def at(k: int) -> int:
        return line[k] if k < n else 0

    while cp < n and (at(cp) in _SPACE or at(cp) > 127):
        cp += 1
    if cp >= n or at(cp) in b"!#":
        return []
    toks: list[Any] = []
    in_string = False
    while True:
        start, two_quotes = cp, False
        if at(cp) == ord('"') and not (in_string and at(cp + 1) == ord('"')):
            cp += 1
            toks.append(QUOTE)
            in_string = not in_string
        elif not in_string and at(cp) in b"{}" and cp < n:
            toks.append(line[cp : cp + 1])
            cp += 1
        else:
            while True:
                while cp < n and (in_string or (at(cp) not in _SPACE and at(cp) < 128 and at(cp) not in b"!#{}")) and at(cp) != ord('"'):
                    cp += 1
                if in_string and at(cp) == ord('"') and at(cp + 1) == ord('"'):
                    two_quotes, cp = True, cp + 2
                    continue
                break
            tok = line[start:cp]
            toks.append(tok.replace(b'""', b'"') if two_quotes else tok)
        while not in_string and cp < n and (at(cp) in _SPACE or at(cp) > 127):
            cp += 1
        if cp >= n or (not in_string and at(cp) in b"!#"):
            return toks


def mp_parse(text: str) -> list[Any]:
    """process_stream(): [(section, [entries and subsections])], a value as set_value() takes it; any extra data fails."""
    root: list[Any] = []
    stack = [root]
    for line in mp_lines(text.encode("utf-8")):
        toks = mp_tokens(line)
        if not toks:
            continue
        first = toks[0]
        assert first is not QUOTE and first != b"{", line
        if first == b"}":
            assert toks == [b"}"] and len(stack) > 1, line
            stack.pop()
        elif first in _SECTIONS:
            assert toks[1:] == [b"{"], line
            section: list[Any] = []
            stack[-1].append((first.decode(), section))
            stack.append(section)
        else:
            rest = toks[1:]
            if len(rest) == 1 and rest[0] is not QUOTE:
                value = rest[0]
            else:  # "value": QUOTE, the value, QUOTE, and nothing after (validate_config_strvec)
                assert len(rest) == 3 and rest[0] is QUOTE and rest[2] is QUOTE and rest[1] is not QUOTE, line
                value = rest[1]
            stack[-1].append((first.decode(), value.decode("utf-8")))
    assert len(stack) == 1, "a section left open"
    return root


def _mp_body(failback: str = "manual") -> list[tuple[str, str]]:
    return [("path_selector", "service-time 0"), ("path_grouping_policy", "group_by_prio"), ("failback", failback)]


@SETTINGS
@given(wwid=names, vendor=names, product=names, label=names, results=names)
def test_multipath_conf_holds_exactly_the_section_and_values_given(wwid, vendor, product, label, results):
    text = attempt(lambda: simulate_text("multipath.conf", label, "dm:service-time", device=wwid), "--device")
    assert (text is None) == must_refuse(wwid, "mpconf")
    if text is not None:
        assert mp_parse(text) == [("multipaths", [("multipath", [("wwid", wwid), *_mp_body()])])]
        assert read_emitted("multipath.conf", text).wwid == wwid
    bad = [w for w, v in (("--vendor", vendor), ("--model", product)) if must_refuse(v, "mpconf")]
    if not (vendor and product):  # an entry needs both, checked before either is written
        bad.insert(0, "--emit multipath.conf")
    text = attempt(lambda: recommend_text("multipath.conf", results, label, "dm:service-time", vendor=vendor, model=product), bad[0] if bad else "")
    assert (text is None) == bool(bad)
    if text is not None:
        # vendor and product are regular expressions to multipath-tools, written as given: the parser must read them back whole
        assert mp_parse(text) == [("devices", [("device", [("vendor", vendor), ("product", product), *_mp_body()])])]
        back = read_emitted("multipath.conf", text)
        assert (back.vendor, back.product) == (vendor, product)


@pytest.mark.parametrize("value", ["}", "{", "{}"])
def test_multipath_conf_brace_values_read_back(value):
    # multipath-tools reads wwid "}" as the value "}" (parser.c: inside quotes a brace is text), as mp_parse does
    text = emit("dm:service-time", "multipath.conf", device=value)
    assert mp_parse(text) == [("multipaths", [("multipath", [("wwid", value), *_mp_body()])])]
    assert read_emitted("multipath.conf", text).wwid == value


# -- PowerShell ------------------------------------------------------------------------------------------------

_PS_SINGLE = "'\u2018\u2019\u201a\u201b"
_PS_SPACE = " \t\v\f\u00a0\ufeff"  # and every Zs character (Language Specification 2.2.4)
_PS_BARE_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:/+=-")


def ps_commands(text: str) -> list[list[str]]:
    """PowerShell's reading: lines end at CR or LF; per line, tokens; a token starting with '#' starts a comment."""
    calls = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        words, i = [], 0
        while i < len(line):
            ch = line[i]
            if ch in _PS_SPACE or unicodedata.category(ch) == "Zs":
                i += 1
            elif ch == "#":
                break
            elif ch in _PS_SINGLE:
                out, i = [], i + 1
                while True:
                    assert i < len(line), "an unclosed string would go on to the next line"
                    if line[i] in _PS_SINGLE:
                        if i + 1 < len(line) and line[i + 1] in _PS_SINGLE:
                            out.append(line[i])
                            i += 2
                            continue
                        i += 1
                        break
                    out.append(line[i])
                    i += 1
                assert i >= len(line) or line[i] in _PS_SPACE, f"{line[i:]!r} right after a string"
                words.append("".join(out))
            else:
                j = i
                while j < len(line) and line[j] not in _PS_SPACE:
                    assert line[j] in _PS_BARE_OK, f"{line[j]!r}: PowerShell may give it meaning in {line!r}"
                    j += 1
                words.append(line[i:j])
                i = j
        if words:
            calls.append(words)
    return calls


@SETTINGS
@given(device=names, label=names, results=names)
def test_powershell_writes_only_a_disk_number_and_comments(device, label, results):
    text = attempt(lambda: simulate_text("powershell", label, "mpio:lqd", device=device), "--device")
    # a disk number in ASCII digits, maybe after "MPIO Disk" (ASCII letters, any case); nothing else
    m = re.fullmatch(r"(?:[Mm][Pp][Ii][Oo] *[Dd][Ii][Ss][Kk])? *([0-9]{1,9})", device.strip(" "))
    assert (text is None) == (m is None)
    if m is not None:
        assert text is not None and ps_commands(text) == [["mpclaim.exe", "-l", "-d", str(int(m.group(1))), "4"]]
        assert read_emitted("powershell", text).disk == int(m.group(1))
    text = attempt(lambda: recommend_text("powershell", results, label, "mpio:lqd"), "")
    assert text is not None and ps_commands(text) == [["Set-MSDSMGlobalDefaultLoadBalancePolicy", "-Policy", "LQD"]]


@SETTINGS
@given(value=names)
def test_powershell_single_quoted_string_reads_back_as_one_token(value):
    quoted = attempt(lambda: ps_quote(value, "--device"), "--device")
    assert (quoted is None) == (must_refuse(value, "sh") or not value.isascii())
    if quoted is not None:
        assert ps_commands(f"Write-Output {quoted}\n") == [["Write-Output", value]]


# -- the real CLI: hostile names in, the output run, no marker file ------------------------------------------

# (argv after "pathsel simulate", exit status, for 0 the esxcli calls or the lines that must be in the output,
#  for 2 a fragment of the one error line); {m} is a marker file that must never appear
CLI = [
    (["--policy", "rr:iops=1", "--emit", "esxcli", "--device", "$(touch {m})"], 0, _rr("$(touch {m})")),
    (["--policy", "rr:iops=1", "--emit", "esxcli", "--device", "`touch {m}`"], 0, _rr("`touch {m}`")),
    (["--policy", "rr:iops=1", "--emit", "esxcli", "--device", "naa.1; touch {m}"], 0, _rr("naa.1; touch {m}")),
    (["--policy", "rr:iops=1", "--emit", "esxcli", "--device", "naa'1' && touch {m} #"], 0, _rr("naa'1' && touch {m} #")),
    (  # issue 32: DSNRO, the device quoted as in the other commands, the number written as digits
        ["--policy", "rr:iops=1", "--emit", "esxcli", "--device", "naa.1; touch {m}", "--sched-num-req-outstanding", "32"],
        0,
        [*_rr("naa.1; touch {m}"), ["storage", "core", "device", "set", "--device=naa.1; touch {m}", "--sched-num-req-outstanding=32"]],
    ),
    (["--policy", "rr:iops=1", "--emit", "esxcli", "--device", "naa.1\ntouch {m}"], 2, "--device: 'naa.1\\ntouch"),
    (["--policy", "rr:iops=1", "--emit", "esxcli", "--device", "naa.1\rtouch {m}"], 2, "holds a line break ('\\r')"),
    (["--policy", "rr:iops=1", "--emit", "esxcli", "--device", "naa\x00.1"], 2, "holds a NUL character at character 4"),
    (["--policy", "rr:iops=1", "--emit", "esxcli", "--device", "naa\u2028touch {m}"], 2, "holds a line break ('\\u2028')"),
    (["--policy", "rr:iops=1", "--emit", "esxcli", "--device", ""], 2, "--device: is empty"),
    (["--policy", "rr:iops=1", "--emit", "esxcli", "--device", "n" * 5000], 2, "--device: is 5000 characters long"),
    (
        ["--policy", "mru", "--emit", "esxcli", "--satp", "$(touch {m})"],
        0,
        [["storage", "nmp", "satp", "set", "--satp=$(touch {m})", "--default-psp=VMW_PSP_MRU"]],
    ),
    (
        ["--policy", "rr:iops=1", "--emit", "satp-rule", "--vendor", "P;touch {m}", "--model", "$(touch {m})"],
        0,
        [
            [
                "storage",
                "nmp",
                "satp",
                "rule",
                "add",
                "-s",
                "VMW_SATP_ALUA",
                "-V",
                "P;touch {m}",
                "-M",
                "$(touch {m})",
                "-P",
                "VMW_PSP_RR",
                "-O",
                "iops=1",
                "-c",
                "tpgs_on",
                "-e",
                "pathsel rr:iops=1",
            ]
        ],
    ),
    (
        ["--policy", "rr:iops=1", "--emit", "satp-rule", "--vendor=--psp=VMW_PSP_FIXED", "--model", "m"],
        2,
        "--vendor: '--psp=VMW_PSP_FIXED' starts with '-'",
    ),
    (
        ["--policy", "mru", "--emit", "satp-rule", "--satp", "VMW_SATP_DEFAULT_AA", "--device", "`touch {m}`"],
        0,
        [["storage", "nmp", "satp", "rule", "add", "-s", "VMW_SATP_DEFAULT_AA", "-d", "`touch {m}`", "-P", "VMW_PSP_MRU", "-e", "pathsel mru"]],
    ),
    (["--policy", "rr:iops=1,label=x\ntouch {m}", "--emit", "esxcli", "--device", "naa.1"], 0, _rr("naa.1")),
    (["--policy", "nvme:numa", "--emit", "nvme-udev", "--model", 'x", RUN+="/bin/touch {m}'], 2, "--model: 'x\", RUN+="),
    (["--policy", "nvme:numa", "--emit", "nvme-udev", "--device", 'nqn.x\nACTION=="add", RUN+="/bin/touch {m}"'], 2, "--device: 'nqn.x\\nACTION"),
    (["--policy", "nvme:numa", "--emit", "nvme-udev", "--model", "NetApp*"], 2, "holds '*', which is a glob pattern character in a match"),
    (["--policy", "nvme:numa", "--emit", "nvme-udev", "--model", "a$env{PATH}"], 2, "holds '$', which starts a substitution"),
    (["--policy", "nvme:numa", "--emit", "nvme-udev", "--model", "a\\"], 2, "holds '\\\\', which is an escape"),
    (
        ["--policy", "nvme:numa", "--emit", "nvme-udev", "--model", "NetApp ONTAP Controller"],
        0,
        ['ACTION=="add", SUBSYSTEM=="nvme-subsystem", ATTR{subsystype}=="nvm", ATTR{model}=="NetApp ONTAP Controller", ATTR{iopolicy}="numa"'],
    ),
    (["--policy", "dm:service-time", "--emit", "multipath.conf", "--vendor", 'X"\n}\nblacklist {\ndevnode ".*"', "--model", "m"], 2, "--vendor:"),
    (
        ["--policy", "dm:service-time", "--emit", "multipath.conf", "--device", 'a" } blacklist { devnode ".*"'],
        2,
        "ends a quoted value in multipath.conf",
    ),
    (["--policy", "dm:service-time", "--emit", "multipath.conf", "--device", "36 00a0 98"], 0, ['\t\twwid "36 00a0 98"']),
    (
        ["--policy", "dm:service-time", "--emit", "multipath.conf", "--vendor", "N#x!", "--model", "L{}"],
        0,
        ['\t\tvendor "N#x!"', '\t\tproduct "L{}"'],
    ),
    (["--policy", "dm:service-time", "--emit", "multipath.conf", "--device", "\U0001d11e" * 250], 2, "is too long for a multipath.conf line"),
    (
        ["--policy", "mpio:lqd", "--emit", "powershell", "--device", "1; Remove-Item C:\\"],
        2,
        "--device: '1; Remove-Item C:\\\\' is not an MPIO disk number",
    ),
    (["--policy", "mpio:lqd", "--emit", "powershell", "--device", "\u0661"], 2, "is not an MPIO disk number"),
    (["--policy", "mpio:lqd", "--emit", "powershell", "--device", "9" * 5000], 2, "is not an MPIO disk number"),
    (["--policy", "mpio:lqd", "--emit", "powershell", "--device", "MPIO Disk12"], 0, ["mpclaim.exe -l -d 12 4"]),
]


def _run_esxcli(text: str, tmp: Path) -> list[list[str]]:
    """``text`` run by bash with a stand-in esxcli; its calls."""
    if BASH is None:
        pytest.skip("no bash")
    script = tmp / "out.sh"
    script.write_text(text, encoding="utf-8")
    rec = tmp / "calls"
    driver = f'PATH=/nonexistent; esxcli() {{ printf \'%s\\0\' "$#" "$@" >> {shlex.quote(str(rec))}; }}; . {shlex.quote(str(script))}'
    subprocess.run([BASH, "-c", driver], cwd=tmp, check=False, timeout=60, env={})
    items = rec.read_bytes().decode().split("\0")[:-1] if rec.exists() else []
    calls = []
    while items:
        n = int(items[0])
        calls.append(items[1 : 1 + n])
        items = items[1 + n :]
    return calls


@pytest.mark.parametrize(("argv", "status", "want"), CLI, ids=[f"{c[0][3]}:{c[0][-1][:20]!r}" for c in CLI])
def test_cli_hostile_names(argv, status, want, tmp_path, capsys):
    marker = tmp_path / "marker"
    argv = [a.replace("{m}", str(marker)) for a in argv]
    assert main(["simulate", *argv]) == status
    out, err = capsys.readouterr()
    if status == 2:
        assert out == "" and len(err.splitlines()) == 1 and err.startswith("pathsel: error: command line: "), err
        assert want in err, err
        return
    assert err == ""
    lines_of(out)
    if argv[3] in ("esxcli", "satp-rule"):
        want = [[w.replace("{m}", str(marker)) for w in call] for call in want]
        assert shell_calls(out) == want
        assert _run_esxcli(out, tmp_path) == want
    else:
        assert all(line in out.splitlines() for line in want), out
    assert not marker.exists()


def test_cli_scenario_path_name_and_label_are_quoted(tmp_path):
    """FIXED's preferred path from a scenario, and its label, with shell syntax in both: one argument, one comment."""
    marker = tmp_path / "marker"
    path = f"$(touch {marker});x,y"
    text = (SIMS / "fast-failover.toml").read_text(encoding="utf-8").replace("nvme0c0n1", path.replace("\\", "\\\\"))
    text = text.replace('spec = "mru"\nlabel = "active/passive (MRU)"', f'spec = "fixed"\npreferred = "{path}"\nlabel = "x\\n`touch {marker}`"')
    text = text.replace('[[policies]]\nspec = "rr:iops=1"\nlabel = "round robin"\n', "")
    scenario = tmp_path / "s.toml"
    scenario.write_text(text, encoding="utf-8")
    out = subprocess.run(
        [str(PATHSEL), "simulate", str(scenario), "--emit", "esxcli", "--device", "naa.1"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    assert out.splitlines()[0] == f"# pathsel simulate --emit esxcli: x\\n`touch {marker}`"
    calls = [
        ["storage", "nmp", "device", "set", "--device=naa.1", "--psp=VMW_PSP_FIXED"],
        ["storage", "nmp", "psp", "fixed", "deviceconfig", "set", "--device=naa.1", f"--path={path}"],
    ]
    assert shell_calls(out) == calls and _run_esxcli(out, tmp_path) == calls
    assert read_emitted("esxcli", out).spec == parse_spec("fixed", {"preferred": path})[0].text
    assert not marker.exists()


def test_cli_device_that_is_not_utf8_is_refused(tmp_path):
    """Bytes that are not UTF-8 on the command line (Python holds them as surrogates): one line, exit 2."""
    r = subprocess.run(
        [bytes(PATHSEL), b"simulate", b"--policy", b"rr", b"--emit", b"esxcli", b"--device", b"naa\xff"],
        capture_output=True,
        timeout=300,
    )
    assert r.returncode == 2 and r.stdout == b""
    assert r.stderr.decode().splitlines() == [
        "pathsel: error: command line: --device: 'naa\\udcff' holds bytes that are not UTF-8 at character 4: pathsel does not write it into a command or a configuration file"
    ]


def test_cli_recommend_results_name_and_setting_are_quoted(tmp_path, capsys):
    """``pathsel recommend`` on a results file whose name and recommended setting hold shell syntax and a newline."""
    import pandas as pd

    marker = tmp_path / "marker"
    rows = [
        {
            "scenario": scenario,
            "point": f"latency.num_sampling_cycles={cycles}",
            "latency.num_sampling_cycles": cycles,
            "replication": 0,
            "seed": 0,
            "policy": f"p\n$(touch {marker})",
            "spec": "rr:iops=1" if cycles == 16 else f"fixed:preferred=$(touch {marker})",
            "iops": iops,
            "p99_us": 1e6 / iops,
            "convergence_s": float("nan"),
        }
        for scenario in ("a", "b")
        for cycles, iops in ((16, 1000), (32, 1500))
    ]
    results = tmp_path / "r\n`touch marker`.csv"  # run in tmp_path: it would make the marker
    pd.DataFrame(rows).to_csv(results, index=False)
    assert main(["recommend", str(results), "--metric", "iops", "--emit", "esxcli", "--device", f"naa.1 $(touch {marker})"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith(f"# pathsel recommend {tmp_path}/r\\n`touch marker`.csv --emit esxcli: ")
    device = f"naa.1 $(touch {marker})"
    calls = [
        ["storage", "nmp", "device", "set", f"--device={device}", "--psp=VMW_PSP_FIXED"],
        ["storage", "nmp", "psp", "fixed", "deviceconfig", "set", f"--device={device}", f"--path=$(touch {marker})"],
    ]
    assert shell_calls(out) == calls and _run_esxcli(out, tmp_path) == calls
    assert not marker.exists()
