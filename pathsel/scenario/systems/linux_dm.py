"""Linux dm-multipath: ``multipath -ll`` (and ``multipath.conf``) in, a ``multipath.conf`` section out.

Sources:

* multipath-tools, ``libmultipath/print.c`` (``snprint_multipath_topology__``
  and its formats: the map line ``%n (%w) %d %s``, ``size=%S
  features='%f' hwhandler='%h' wp=%r``, the group line ``policy='%s'
  prio=%p status=%t`` and the path line ``%i %d %D %t %T %o``: H:C:T:L,
  device node, major:minor, dm state, checker state, online state), tag
  0.14.3, https://github.com/opensvc/multipath-tools; and Red Hat, "DM
  Multipath", RHEL 7, section 5.7 "Multipath Command Output" (2019),
  https://docs.redhat.com/en/documentation/red_hat_enterprise_linux/7/html/dm_multipath/mpio_output
* multipath.conf(5), multipath-tools: sections ``defaults``, ``devices``
  (``device``: ``vendor``, ``product`` regular expressions), ``multipaths``
  (``multipath``: ``wwid``), ``overrides``; keywords ``path_selector``,
  ``path_grouping_policy``, ``failback``; the built-in device table
  ``libmultipath/hwtable.c`` (:mod:`pathsel.policies.presets`).

How pathsel reads ``multipath -ll``:

* a map (a volume) is ``[alias (]WWID[)] dm-N VENDOR,PRODUCT``; its policy
  is the group line's selector (``'service-time 0'`` is ``dm:service-time``)
  with the grouping the groups show (one group: ``multibus``; one path per
  group: ``failover``; else ``group_by_prio``) and ``failback`` from
  multipath.conf (a ``multipaths`` entry for the WWID, ``overrides``, a
  matching ``devices`` entry, ``defaults``), else multipath-tools' built-in
  entry for the vendor and product, else ``manual`` (the output does not
  show it);
* the group with the highest ``prio`` holds the AO paths; a lower group's
  paths are ANO (prio > 1), standby (1) or unavailable (0), as the ``alua``
  prioritizer's 50/10/1/0; a ``ghost`` path is standby; a ``faulty``,
  ``shaky`` or ``failed`` path is written unavailable (pathsel has no path
  that starts down), with a note;
* a path is an H:C:T:L; its nexus H:C:T. One map's paths are named by
  device node (``sdb``, as ``iostat`` names them); several maps' by
  ``H:C:T:{lun}``. The output does not tell which array a target port
  belongs to: one array, and a note when ANO paths might lead to a second
  (a metro cluster) rather than to the partner controller.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import re2

from ...errors import ScenarioError
from ...policies.framework.define import INT32_MAX
from ...policies.presets import PRESETS
from ...policies.spec import PolicySpec, parse_spec
from ...units import MAX_DURATION
from .groups import choose, infer_port_groups, mixed_states
from .quoting import comment_text, mpconf_value
from .skeleton import SkArray, Skeleton, SkPath, SkVolume
from .text import Source, ascii_int, check_name

__all__ = ["import_multipath", "parse_multipath_conf", "ConfSection", "emit_multipath_conf", "read_multipath_conf", "DmSetting"]

# re.ASCII and at most 9 digits: \d would take Arabic-Indic digits, and a longer number is no H:C:T:L or prio
_MAP = re.compile(r"^(?:(?P<action>[a-z]+): )?(?P<name>\S+)(?: \((?P<wwid>[^)]+)\))? (?P<dm>dm-[0-9]{1,9}|undef) ?(?P<vp>.*)$", re.ASCII)
_GROUP = re.compile(r"^[\s|`]*[|`]-\+- ?policy='(?P<sel>[^']*)' prio=(?P<prio>-?[0-9]{1,9}) status=(?P<status>\w+)", re.ASCII)
# The path line up to its dm state; the rest (checker state, which may be two words such as "i/o timeout", and
# the online state) is split in Python: "(?P<chk>.+?) +(?P<online>\w+)\s*$" takes time quadratic in a run of spaces.
_PATH = re.compile(
    r"^[\s|`]*[|`]- (?P<hctl>[0-9]{1,9}:[0-9]{1,9}:[0-9]{1,9}:[0-9]{1,9}) (?P<dev>\S+) +(?P<devt>[0-9]+:[0-9]+) +(?P<dm>\w+) +(?P<rest>.*)$",
    re.ASCII,
)
_WORD = re.compile(r"\w+", re.ASCII)


def _path_line(line: str) -> dict[str, str] | None:
    """A path line's fields (hctl, dev, devt, dm, chk, online), or None if it is not one."""
    m = _PATH.match(line)
    if not m:
        return None
    words = m.group("rest").split()
    if len(words) < 2 or not _WORD.fullmatch(words[-1]):
        return None
    fields = {k: v for k, v in m.groupdict().items() if k != "rest"}
    return {**fields, "chk": " ".join(words[:-1]), "online": words[-1]}


SELECTORS = ("round-robin", "queue-length", "service-time", "historical-service-time")
_DOWN = ("faulty", "shaky", "i/o timeout", "removed", "disconnected")


@dataclass
class _Map:
    name: str
    wwid: str
    vendor: str
    product: str
    line: int
    groups: list[dict[str, Any]] = field(default_factory=list)


def _parse_ll(src: Source) -> list[_Map]:
    maps: list[_Map] = []
    names: dict[str, int] = {}  # map names and WWIDs -> the line of their map
    for n, raw in enumerate(src.lines, 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        if line.startswith("size="):
            if not maps:
                raise src.fail(n, "a size= line before any map line ('WWID dm-N VENDOR,PRODUCT')")
            continue
        g = _GROUP.match(line)
        if g:
            if not maps:
                raise src.fail(n, "a path group line before any map line ('WWID dm-N VENDOR,PRODUCT')")
            maps[-1].groups.append({"selector": g.group("sel"), "prio": int(g.group("prio")), "line": n, "paths": []})
            continue
        p = _path_line(line)
        if p:
            if not maps or not maps[-1].groups:
                raise src.fail(n, "a path line before any path group line (\"policy='service-time 0' prio=50 status=active\")")
            maps[-1].groups[-1]["paths"].append({**p, "line": n})
            continue
        if line[0] in " |`":
            if "policy=" in line:
                raise src.fail(n, f"a path group line without prio= and status=: {line.strip()[:60]!r}")
            raise src.fail(n, f"expected a path line such as '|- 1:0:0:1 sdb 8:16 active ready running', got {line.strip()[:60]!r}")
        m = _MAP.match(line)
        if not m:
            raise src.fail(n, f"expected a map line such as '3600a0980... dm-0 NETAPP,LUN C-Mode', got {line[:60]!r}")
        vendor, _, product = m.group("vp").partition(",")
        name = check_name(src, n, "map name", m.group("name"))
        wwid = check_name(src, n, "WWID", m.group("wwid") or name)
        for ident in dict.fromkeys((name, wwid)):  # a map listed twice: two volumes of one name, or one volume's paths split
            if ident in names:
                raise src.fail(n, f"map {name} ({wwid}) is listed twice (the first is line {names[ident]})")
            names[ident] = n
        maps.append(_Map(name, wwid, vendor.strip(), product.strip(), n))
    if not maps:
        raise src.fail(1, "no multipath maps: not multipath -ll output")
    seen: dict[tuple[str, str], int] = {}  # (device node or H:C:T:L, its value) -> the line that lists it: each is one path
    for mp in maps:
        if not mp.groups:
            raise src.fail(mp.line, f"map {mp.name} has no path groups (is the output cut short?)")
        for group in mp.groups:
            if not group["paths"]:
                raise src.fail(group["line"], f"map {mp.name}: a path group with no paths (is the output cut short?)")
            for p in group["paths"]:
                check_name(src, p["line"], "device node", p["dev"])
                for key in (("dev", p["dev"]), ("hctl", p["hctl"])):
                    if key in seen:
                        raise src.fail(p["line"], f"path {key[1]} is listed twice (the first is line {seen[key]})")
                    seen[key] = p["line"]
    return maps


# -- multipath.conf -------------------------------------------------------------------------------------


@dataclass
class ConfSection:
    name: str
    line: int
    attrs: dict[str, tuple[str, int]] = field(default_factory=dict)
    children: list[ConfSection] = field(default_factory=list)

    def sections(self, name: str) -> list[ConfSection]:
        return [c for c in self.children if c.name == name]

    def value(self, key: str) -> str | None:
        v = self.attrs.get(key)
        return v[0] if v else None


class _Quoted(str):
    """A token written in double quotes: its text, never a section brace (``product "}"`` is a value)."""


def _brace(tok: str, ch: str) -> bool:
    return tok == ch and not isinstance(tok, _Quoted)


def _tokens(line: str) -> list[str]:
    out: list[str] = []
    word, quoted = "", False
    for ch in line:
        if quoted:
            if ch == '"':
                out.append(_Quoted(word))
                word, quoted = "", False
            else:
                word += ch
        elif ch == '"':
            quoted = True
        elif ch in "#!":
            break
        elif ch.isspace() or ch in "{}":
            if word:
                out.append(word)
                word = ""
            if ch in "{}":
                out.append(ch)
        else:
            word += ch
    if quoted:
        raise ValueError("a quoted value does not end on its line")
    if word:
        out.append(word)
    return out


def parse_multipath_conf(src: Source) -> ConfSection:
    """multipath.conf as sections and ``keyword value`` attributes, or one located error."""
    root = ConfSection("", 0)
    stack = [root]
    for n, raw in enumerate(src.lines, 1):
        try:
            toks = _tokens(raw)
        except ValueError as e:
            raise src.fail(n, str(e)) from None
        i = 0
        while i < len(toks):
            t = toks[i]
            if _brace(t, "}"):
                if len(stack) == 1:
                    raise src.fail(n, "a '}' closes no section")
                stack.pop()
                i += 1
            elif i + 1 < len(toks) and _brace(toks[i + 1], "{") and not isinstance(t, _Quoted):
                sec = ConfSection(t, n)
                stack[-1].children.append(sec)
                stack.append(sec)
                i += 2
            elif _brace(t, "{"):
                raise src.fail(n, "a '{' without a section name before it")
            else:
                rest = []
                j = i + 1
                while j < len(toks) and not (_brace(toks[j], "{") or _brace(toks[j], "}")):
                    rest.append(toks[j])
                    j += 1
                if len(stack) == 1:
                    raise src.fail(n, f"{t!r} outside any section (defaults, devices, multipaths, overrides)")
                stack[-1].attrs[t] = (" ".join(rest), n)
                i = j
    if len(stack) > 1:
        raise src.fail(stack[-1].line, f"section '{stack[-1].name}' opened here is never closed (is the file cut short?)")
    return root


def _selector_spec(src: Source, text: str, line: int) -> tuple[str, str]:
    """``'service-time 0'`` -> ("dm:service-time", extra params for historical-service-time)."""
    words = text.split()
    if not words or words[0] not in SELECTORS:
        raise src.fail(line, f"path_selector {text!r} is not a dm selector pathsel models ({', '.join(SELECTORS)})")
    extra = ""
    if words[0] == "historical-service-time" and len(words) >= 4 and words[1] == "2":
        if ascii_int(words[2]) is None or ascii_int(words[3]) is None:  # checked, not pasted: a ',' would add a key
            raise src.fail(line, f"path_selector {text[:60]!r}: historical-service-time's weight and multiplier are whole numbers")
        extra = f"base_weight={words[2]},threshold_multiplier={words[3]}"
    return f"dm:{words[0]}", extra


# multipath.conf's vendor and product are POSIX extended regular expressions that multipath-tools
# compiles with regcomp(REG_EXTENDED|REG_NOSUB) and tests with regexec: a search, not a full match
# (libmultipath/config.c, hwe_regmatch; multipath.conf(5), "devices section"; tag 0.14.3,
# https://github.com/opensvc/multipath-tools). Python's re backtracks, and a pattern such as "(a+)+b"
# against a long product string never ends; RE2 (google-re2) runs in time linear in the text, with no
# backtracking. Its posix_syntax mode takes egrep's syntax (no \d, no lookaround, no backreferences),
# one_line and dot_nl make ^, $ and . behave as regexec's without REG_NEWLINE, and for a match/no-match
# question its leftmost-first and POSIX's leftmost-longest agree. A pattern RE2 refuses (a backreference,
# which glibc's ERE allows as an extension, or a malformed one, which regcomp refuses and multipath-tools
# then never matches) gets one located message rather than a guess.
_ERE_OPTIONS = re2.Options()
_ERE_OPTIONS.posix_syntax = True
_ERE_OPTIONS.longest_match = True
_ERE_OPTIONS.one_line = True
_ERE_OPTIONS.dot_nl = True
_ERE_OPTIONS.never_capture = True  # REG_NOSUB
_ERE_OPTIONS.log_errors = False  # else RE2 prints its own line on stderr for a pattern it refuses


@lru_cache(maxsize=256)
def _ere(pattern: str) -> re2._Regexp[str]:
    """``pattern`` compiled as multipath-tools' regcomp would take it; re2.error for one RE2 cannot run."""
    return re2.compile(pattern, _ERE_OPTIONS)


def _ere_search(pattern: str, text: str) -> bool:
    return _ere(pattern).search(text) is not None


def _conf_for(conf: ConfSection | None, wwid: str, vendor: str, product: str, src: Source | None = None) -> dict[str, tuple[str, int, str]]:
    """path_selector, path_grouping_policy, failback as multipath.conf sets them for a map: value, line, where."""
    out: dict[str, tuple[str, int, str]] = {}
    if conf is None:
        return out
    layers: list[tuple[ConfSection, str]] = []
    for d in conf.sections("defaults"):
        layers.append((d, "defaults"))
    for devs in conf.sections("devices"):
        for dev in devs.sections("device"):
            v, p = dev.value("vendor") or "", dev.value("product") or ""
            matched = True
            for key, pattern, text in (("vendor", v, vendor), ("product", p, product)):
                try:
                    matched = matched and _ere_search(pattern, text)
                except re2.error as e:
                    why = e.args[0].decode("utf-8", "replace") if e.args and isinstance(e.args[0], bytes) else str(e)
                    place = dev.attrs.get(key, ("", dev.line))[1]
                    problem = f"{key} {pattern[:60]!r} is not a POSIX extended regular expression pathsel can match ({why})"
                    raise (src.fail(place, problem) if src else ScenarioError("multipath.conf", f"line {place}", problem)) from None
            if matched:
                layers.append((dev, f"devices {v}/{p}"))
    for o in conf.sections("overrides"):
        layers.append((o, "overrides"))
    for mps in conf.sections("multipaths"):
        for mp in mps.sections("multipath"):
            if mp.value("wwid") == wwid:
                layers.append((mp, f"multipaths {wwid}"))
    for sec, where in layers:  # later layers win
        for key in ("path_selector", "path_grouping_policy", "failback", "no_path_retry", "polling_interval", *SHAKY_KEYS):
            if key == "polling_interval" and where != "defaults":
                continue  # multipath-tools reads polling_interval in defaults only (dict.c: install_keyword under "defaults")
            if key == "failback" and sec.attrs.get(key, ("",))[0] == "0":
                continue  # failback 0 is FAILBACK_UNDEF: the next layer decides (dict.c set_pgfailback; propsel.c)
            if key in sec.attrs:
                value, line = sec.attrs[key]
                out[key] = (value, line, where)
    return out


# multipathd's shaky-path settings (multipath.conf(5) "Shaky paths detection"; defaults, devices, overrides and
# multipaths sections alike): "no" or a whole number > 0 (dict.c set_off_int_undef), as dm:*'s parameters of the same name
SHAKY_KEYS = (
    "san_path_err_threshold",
    "san_path_err_forget_rate",
    "san_path_err_recovery_time",
    "marginal_path_double_failed_time",
    "marginal_path_err_sample_time",
    "marginal_path_err_rate_threshold",
    "marginal_path_err_recheck_gap_time",
)


def _shaky(src: Source, settings: dict[str, tuple[str, int, str]]) -> str:
    """The shaky-path keys multipath.conf sets for a map, as spec parameters ("" when none is on); bad values refused
    with their line."""
    out = []
    for key in SHAKY_KEYS:
        if key in settings:
            value, line, _where = settings[key]
            if value.lower() in ("no", "0"):
                continue
            if ascii_int(value, 1, INT32_MAX) is None:  # checked, not pasted: "5,failback=immediate" would add a key
                raise src.fail(line, f"{key} must be no or a whole number > 0 (at most {INT32_MAX}), got {value[:60]!r}")
            out.append(f"{key}={int(value)}")
    return ",".join(out)


def _hwtable_failback(vendor: str, product: str) -> tuple[str, str] | None:
    """failback of multipath-tools' built-in entry for the vendor and product (the last that matches)."""
    found = None
    for p in PRESETS.values():
        if p.system == "linux-dm" and p.vendor and _ere_search(p.vendor, vendor) and _ere_search(p.product, product):
            found = (parse_spec(p.spec)[0]["failback"], p.name)
    return found


def _failback(src: Source, value: str, line: int) -> str:
    """multipath.conf's failback as the spec takes it: immediate, manual, followover, or seconds (dict.c, set_pgfailback)."""
    if value in ("immediate", "manual", "followover"):
        return value
    if ascii_int(value, 1) is None:  # checked, not pasted: "30,path_grouping_policy=multibus" would add a key
        raise src.fail(line, f"failback must be immediate, manual, followover or a whole number of seconds > 0, got {value[:60]!r}")
    return value


def import_multipath(sources: list[Source], host: str = "linux01", devices: list[str] | None = None) -> Skeleton:
    """A skeleton from ``multipath -ll`` (and ``multipath.conf``); ``devices``: map names or WWIDs (globs) to keep."""
    ll = [s for s in sources if re.search(r"policy='", s.text) or re.search(r" dm-\d+ ", s.text)]
    confs = [s for s in sources if s not in ll]
    if len(ll) != 1:
        name = (sources[1] if len(ll) > 1 else sources[0]).name
        raise ScenarioError(
            name,
            "",
            "give one multipath -ll output (and optionally one multipath.conf)"
            if ll
            else "no multipath -ll output among the files (lines such as \"|-+- policy='service-time 0' prio=50\")",
        )
    if len(confs) > 1:
        raise ScenarioError(confs[1].name, "", "give one multipath.conf")
    src = ll[0]
    conf_src = confs[0] if confs else None
    conf = parse_multipath_conf(conf_src) if conf_src else None
    maps = _parse_ll(src)
    kept = choose(((m.name, [m.wwid]) for m in maps), devices, src.name, "map")
    if kept is not None:
        maps = [m for m in maps if m.name in kept]
    notes: list[str] = []
    several = len(maps) > 1
    specs: dict[str, str] = {}
    nexus: dict[tuple[str, str, str], dict[str, Any]] = {}
    for mp in maps:
        sel = {g["selector"] for g in mp.groups}
        if len(sel) > 1:
            raise src.fail(mp.groups[1]["line"], f"map {mp.name}: path groups with different selectors ({', '.join(sorted(sel))})")
        spec_name, extra = _selector_spec(src, mp.groups[0]["selector"], mp.groups[0]["line"])
        sizes = [len(g["paths"]) for g in mp.groups]
        grouping = "multibus" if len(sizes) == 1 and sizes[0] > 1 else "failover" if len(sizes) > 1 and max(sizes) == 1 else "group_by_prio"
        settings = _conf_for(conf, mp.wwid, mp.vendor, mp.product, conf_src)
        failback = "manual"
        if "failback" in settings and conf_src is not None:
            failback = _failback(conf_src, settings["failback"][0], settings["failback"][1])
        elif hw := _hwtable_failback(mp.vendor, mp.product):
            failback = hw[0]
            notes.append(f"{mp.name}: failback {failback} from multipath-tools' built-in entry ({hw[1]}): the output does not show it")
        else:
            notes.append(f"{mp.name}: failback manual (multipath-tools' default): the output does not show it; give multipath.conf if it sets one")
        if "path_selector" in settings and conf_src is not None:
            value, line, where = settings["path_selector"]
            if _selector_spec(conf_src, value, line)[0] != spec_name:
                notes.append(
                    f'{mp.name}: multipath.conf ({where}, line {line}) sets path_selector "{value}" but the map runs '
                    f"'{mp.groups[0]['selector']}' (multipathd reconfigure applies it): imported as running"
                )
        shaky = _shaky(conf_src, settings) if conf_src is not None else ""
        # the checker's ticks, which reinstate a path dm failed on an I/O error (a bad value is refused below)
        polling = ascii_int(settings["polling_interval"][0], 1, int(MAX_DURATION)) if "polling_interval" in settings else None
        if polling is not None and polling != 5:
            shaky = ",".join(x for x in (shaky, f"polling_interval={polling}") if x)
        text = spec_name + ":" + ",".join(x for x in (f"path_grouping_policy={grouping}", f"failback={failback}", shaky, extra) if x)
        try:
            specs[mp.name] = parse_spec(text)[0].text
        except ValueError as e:
            place = settings.get("failback", (None, mp.line))[1]
            raise (conf_src if "failback" in settings and conf_src is not None else src).fail(place, f"{mp.name}: {e}") from None
        top = max(g["prio"] for g in mp.groups)
        for g in mp.groups:
            base = "AO" if g["prio"] == top else "ANO" if g["prio"] > 1 else "standby" if g["prio"] == 1 else "unavailable"
            for p in g["paths"]:
                h, c, t, lun = p["hctl"].split(":")
                state, why = base, ""
                if p["chk"] == "ghost":
                    state = base = "standby"
                if p["dm"] == "failed" or p["chk"] in _DOWN:
                    state, why = "unavailable", f"{p['dm']} {p['chk']} in the capture"
                key = (h, c, t)
                nx = nexus.setdefault(key, {"state": state, "why": why, "maps": {}, "per": {}, "dev": p["dev"], "hctl": p["hctl"], "line": p["line"]})
                if mp.name in nx["maps"]:  # two LUNs of one map over one nexus: one would silently replace the other
                    raise src.fail(p["line"], f"map {mp.name} has two paths over {h}:{c}:{t} (the first is line {nx['line']})")
                if why and not nx["why"]:  # the note names the path that is down
                    nx["why"], nx["hctl"], nx["dev"] = why, p["hctl"], p["dev"]
                nx["maps"][mp.name] = int(lun)
                nx["per"][mp.name] = base  # the group's state for this LUN (prio), down or not: the groups come from it
    for mp in maps:
        missing = [k for k, e in nexus.items() if mp.name not in e["maps"]]
        if missing:
            h, c, t = missing[0]
            raise src.fail(
                mp.line,
                f"map {mp.name} has no path over {h}:{c}:{t}, which other maps use: pathsel gives every "
                "volume a path over every nexus; import the maps one at a time",
            )
    vp = f"{maps[0].vendor},{maps[0].product}"
    sk = Skeleton("multipath", [s.name for s in sources], host, "scsi")
    # LUNs owned by different controllers: one wire is AO for one map and ANO for another; ALUA states are per
    # (LUN, target port group), so the nexuses are grouped by their states over the maps (groups.py)
    per_nexus = {k: dict(e["per"]) for k, e in nexus.items()}
    tpg = infer_port_groups(per_nexus, [m.name for m in maps]) if mixed_states(per_nexus) else None
    array = SkArray("array1", vp)
    if tpg is not None:
        array.controllers, array.port_groups = tpg.controllers, list(tpg.controller_of.items())
        notes.append(
            f"{len(tpg.groups)} target port group(s) inferred from the path groups' priorities over the maps "
            f"(multipath -ll does not name them): {', '.join(f'{g} on controller {c}' for g, c in tpg.controller_of.items())}"
        )
    sk.arrays.append(array)
    for mp in maps:
        lun = next(iter({e["maps"][mp.name] for e in nexus.values()}))
        vol = SkVolume(mp.name, lun if several else None, None, f"{mp.wwid} {mp.vendor},{mp.product}")
        if tpg is not None:
            vol.alua, vol.owner = tpg.alua[mp.name], tpg.owner[mp.name]
        sk.volumes.append(vol)
    for key, nx in nexus.items():  # in the order multipath -ll lists them (the current group first)
        name = f"{key[0]}:{key[1]}:{key[2]}:{{lun}}" if several else nx["dev"]
        comment = nx["hctl"] if not several else ""
        path_state: str | None = ("unavailable" if nx["why"] else nx["state"]) if tpg is None else ("unavailable" if nx["why"] else None)
        group = None if tpg is None else tpg.group_of[key]
        sk.paths.append(SkPath(name, "array1", path_state, comment=", ".join(x for x in (comment, nx["why"]) if x), port_group=group))
        if nx["why"]:
            notes.append(f'{nx["hctl"]} ({nx["dev"]}) is {nx["why"]}: written alua = "unavailable"')
    if several and len(set(specs.values())) > 1:  # each map keeps its own selector: one run, the host as it is
        for vol in sk.volumes:
            vol.policy = specs[vol.name]
        notes.append(
            "maps with different selectors or settings: each [[volumes]] entry keeps its own (policy); the scenario runs them together, once"
        )
        sk.policies.append(("", "as imported: per device"))
    else:
        for spec in dict.fromkeys(specs.values()):
            sk.policies.append((spec, f"as imported: {spec}"))
    if tpg is None and any(e["state"] == "ANO" for e in nexus.values()):
        notes.append(
            "ANO paths may lead to the partner controller or to a second array (a metro cluster): "
            "multipath -ll does not say; for a metro cluster add an [[arrays]] entry, [replication] and set those paths' array"
        )
    sk.told = [
        f"host {host}: {len(maps)} map(s) ({', '.join(m.name for m in maps)}), {vp}, {len(nexus)} path(s); "
        f"policy {', '.join(dict.fromkeys(specs.values()))}"
    ]
    sk.detection = "dm"
    sk.detection_note = "multipathd's polling_interval (5 s)"
    first = _conf_for(conf, maps[0].wwid, maps[0].vendor, maps[0].product, conf_src)
    interval = first.get("polling_interval")
    seconds = 5
    if interval and conf_src is not None:
        # an unsigned number of seconds (dict.c, set_uint); 0 leaves multipathd dividing by zero (config.c), and
        # more than MAX_DURATION is longer than any run
        polling = ascii_int(interval[0], 1, int(MAX_DURATION))
        if polling is None:
            raise conf_src.fail(interval[1], f"polling_interval {interval[0][:60]!r} is not a whole number of seconds in 1..{int(MAX_DURATION):,}")
        seconds = polling
        sk.detection, sk.detection_note = f"{polling}s", f"polling_interval {polling} (multipath.conf line {interval[1]})"
        sk.origins["hosts[0].detection"] = (conf_src.name, interval[1])

    retry = first.get("no_path_retry")
    if retry and conf_src is not None:
        # "fail" or "0" fail at once, "queue" queues for ever, N > 0 retries for N polling intervals
        # (dict.c, no_path_retry_helper: strcmp "fail" or "0", "queue", else do_set_int 1..INT_MAX)
        word = retry[0]
        count = ascii_int(word, 1)
        if word not in ("queue", "fail", "0") and count is None:
            raise conf_src.fail(retry[1], f"no_path_retry {word[:60]!r} is not queue, fail or a whole number of polling intervals")
        if word == "queue" or (count is not None and count * seconds > MAX_DURATION):
            sk.apd_timeout = "queue"  # past the longest run pathsel simulates: the same as queueing for ever
        else:
            sk.apd_timeout = "1ms" if count is None else f"{count * seconds}s"
        notes.append(f"apd_timeout {sk.apd_timeout}: no_path_retry {word} ({retry[2]}, multipath.conf line {retry[1]})")
    sk.notes = notes
    return sk


# -- multipath.conf out ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DmSetting:
    spec: str
    wwid: str | None = None
    vendor: str | None = None
    product: str | None = None


def emit_multipath_conf(spec: PolicySpec, wwid: str | None = None, vendor: str | None = None, product: str | None = None) -> str:
    """The multipath.conf section that sets ``spec``: for one map (``wwid``), a vendor/product, or as the default."""
    if not spec.name.startswith("dm:"):
        other = {"nvme": "nvme-udev", "mpio": "powershell"}.get(spec.name.split(":")[0], "esxcli")
        raise ScenarioError(
            "command line",
            "--emit multipath.conf",
            f"{spec.text} is not a dm-multipath selector (dm:round-robin, dm:queue-length, dm:service-time, "
            f"dm:historical-service-time); emit it with --emit {other}",
        )
    selector = spec.name[3:]
    if selector == "io-affinity":  # its table takes a CPU mask per path: a dmsetup table, not multipath.conf
        raise ScenarioError(
            "command line",
            "--emit multipath.conf",
            f"{spec.text}: io-affinity takes a CPU mask per path in the device-mapper table "
            "(dmsetup create/reload: 'io-affinity 0 <paths> 1 <dev> <cpumask> ...'), "
            "which multipath.conf cannot set",
        )
    args = "0"
    if selector == "historical-service-time" and (spec["base_weight"] != 972 or spec["threshold_multiplier"] != 0):
        args = f"2 {spec['base_weight']} {spec['threshold_multiplier']}"
    body = [f'path_selector "{selector} {args}"', f"path_grouping_policy {spec['path_grouping_policy']}", f"failback {spec['failback']}"]
    # the shaky-path keys when on (whole numbers, validated by the spec: nothing to quote)
    body += [f"{key} {int(spec[key])}" for key in SHAKY_KEYS if spec[key]]
    polling = spec["polling_interval"]
    if float(polling) != int(float(polling)):
        raise ScenarioError(
            "command line",
            "--emit multipath.conf",
            f"{spec.text}: polling_interval {polling} is not a whole number of seconds (multipath.conf takes one)",
        )
    if float(polling) > MAX_DURATION:  # the import's bound: what is emitted must read back
        raise ScenarioError(
            "command line",
            "--emit multipath.conf",
            f"{spec.text}: polling_interval {int(float(polling))} is more than {int(MAX_DURATION):,} s (longer than any run; the import refuses it)",
        )
    # polling_interval lives in the defaults section only (dict.c)
    head_lines = ["defaults {", f"\tpolling_interval {int(float(polling))}", "}"] if int(float(polling)) != 5 else []
    # A multipaths entry's wwid is compared as a string (libmultipath/config.c, find_mpe: strcmp); a devices
    # entry's vendor and product are POSIX extended regular expressions (multipath.conf(5); hwtable.c's
    # "^(HSV1[01]1|...)"), and pathsel writes them as the user gives them ("LUN.*" in docs/emit.md), so a
    # literal name with regex characters in it matches as a pattern, as multipath.conf's own entries do.
    # Either way mpconf_value refuses what the parser would not read back as that one value.
    if wwid is not None:
        head, inner, match = "multipaths", "multipath", [f"wwid {mpconf_value(wwid, '--device', quote=False)}"]
    elif vendor is not None or product is not None:
        if not (vendor and product):
            raise ScenarioError(
                "command line", "--emit multipath.conf", "a devices entry needs both --vendor and --model (the SCSI vendor and product)"
            )
        head, inner, match = "devices", "device", [f"vendor {mpconf_value(vendor, '--vendor')}", f"product {mpconf_value(product, '--model')}"]
    else:
        if head_lines:
            body.insert(0, head_lines[1].strip())
        lines = [f"# pathsel: {comment_text(spec.text)}", "defaults {", *(f"\t{b}" for b in body), "}"]
        return "\n".join(lines) + "\n"
    notes = _override_notes(spec, selector, args, vendor, product) if head == "devices" else []
    lines = [
        f"# pathsel: {comment_text(spec.text)}",
        *notes,
        *head_lines,
        f"{head} {{",
        f"\t{inner} {{",
        *(f"\t\t{b}" for b in match + body),
        "\t}",
        "}",
    ]
    return "\n".join(lines) + "\n"


def _override_notes(spec: PolicySpec, selector: str, args: str, vendor: str | None, product: str | None) -> list[str]:
    """Comment lines saying which of multipath-tools' built-in settings for ``vendor``/``product`` the emitted
    device entry overrides, with the built-in value, as ``multipath -t`` shows the merged result.

    The built-in entry is the last of pathsel's hwtable presets (:mod:`pathsel.policies.presets`) whose vendor and
    product patterns match the names given (propsel.c: the device's settings come from the matching hwtable
    entries, a user's devices entry for the same device taking precedence, key by key). A name given as a pattern
    ("LUN.*") is searched as text: an assumption that holds when it starts with the product's own letters."""
    if not (vendor and product):
        return []
    found = None
    for p in PRESETS.values():
        if p.system == "linux-dm" and p.vendor and _ere_search(p.vendor, vendor) and _ere_search(p.product, product):
            found = p
    if found is None:
        return [
            f"# no built-in entry of multipath-tools 0.14.3 (hwtable.c) matches {comment_text(vendor)}/{comment_text(product)}: nothing overridden"
        ]
    built = parse_spec(found.spec)[0]
    out = [f"# built-in entry (preset:{found.name}, {found.source}): {comment_text(found.setting)}"]
    same = []
    emitted_selector = f"{selector} {args}"
    if emitted_selector != "service-time 0":
        out.append('# overrides the built-in path_selector "service-time 0" (the default; the entry sets none)')
    else:
        same.append('path_selector "service-time 0"')
    for key in ("path_grouping_policy", "failback"):
        if str(spec[key]) != str(built[key]):
            out.append(f"# overrides the built-in {key} {built[key]}")
        else:
            same.append(f"{key} {built[key]}")
    if same:
        out.append("# the same as built in: " + ", ".join(same))
    out.append("# the built-in entry's other settings still apply (multipath -t shows the merged entry)")
    return out


def read_multipath_conf(src: Source) -> DmSetting:
    """The one setting a multipath.conf snippet makes (``--emit multipath.conf`` read back)."""
    conf = parse_multipath_conf(src)
    found: list[tuple[ConfSection, str | None, str | None, str | None]] = []
    for d in conf.sections("defaults"):
        found.append((d, None, None, None))
    for devs in conf.sections("devices"):
        for dev in devs.sections("device"):
            found.append((dev, None, dev.value("vendor"), dev.value("product")))
    for mps in conf.sections("multipaths"):
        for mp in mps.sections("multipath"):
            found.append((mp, mp.value("wwid"), None, None))
    found = [f for f in found if "path_selector" in f[0].attrs]
    if len(found) != 1:
        raise src.fail(None, f"sets path_selector in {len(found)} places; pathsel reads one")
    sec, wwid, vendor, product = found[0]
    value, line = sec.attrs["path_selector"]
    name, extra = _selector_spec(src, value, line)
    keys = [f"{k}={sec.value(k)}" for k in ("path_grouping_policy", "failback") if sec.value(k)] + ([extra] if extra else [])
    shaky = _shaky(src, {k: (v, ln, "") for k, (v, ln) in sec.attrs.items() if k in SHAKY_KEYS})
    if shaky:
        keys.append(shaky)
    for d in conf.sections("defaults"):  # polling_interval: the defaults section's
        if "polling_interval" in d.attrs:
            value, pline = d.attrs["polling_interval"]
            if ascii_int(value, 1, int(MAX_DURATION)) is None:
                raise src.fail(pline, f"polling_interval {value[:60]!r} is not a whole number of seconds in 1..{int(MAX_DURATION):,}")
            if int(value) != 5:
                keys.append(f"polling_interval={int(value)}")
    try:
        spec = parse_spec(name + (":" + ",".join(keys) if keys else ""))[0]
    except ValueError as e:
        raise src.fail(line, str(e)) from None
    return DmSetting(spec.text, wwid, vendor, product)
