"""Shipped defaults as presets: ``preset:NAME`` runs what a vendor's or an OS's default configures.

A preset is the policy that a shipped file sets for a kind of device, in
pathsel's spec words, with the file, the project and the version it comes
from, so that "what does the default do on my metro cluster" is one command::

    pathsel simulate sims/esxi-latency-testdrive.toml --policy preset:esxi-satp-alua-default

``pathsel presets`` lists them. A preset resolves to an ordinary spec (the
table's ``spec`` column and ``--policy`` reproduce it), labelled with the
preset's name. Keys after it override or add parameters and run settings:
``preset:dm-netapp-ontap:failback=manual``, ``preset:esxi-pure-flasharray:preferred_array=local``.

Sources (each preset names its file and version):

* multipath-tools, ``libmultipath/hwtable.c`` (the built-in device table) and
  ``libmultipath/defaults.h`` (``DEFAULT_SELECTOR "service-time 0"``,
  ``DEFAULT_FAILBACK -FAILBACK_MANUAL``), tag 0.14.3, commit
  c2fcdaf138260800d0cec4addf81ed27b5040bd8 (2026-02-05), opensvc/multipath-tools,
  https://github.com/opensvc/multipath-tools. No hwtable entry below sets
  ``path_selector``, so every one runs the default ``service-time 0``;
  ``detect_pgpolicy`` (on by default since 0.9.6) makes ALUA devices
  ``group_by_prio`` where an entry says nothing.
* nvme-cli's udev rules, ``nvmf-autoconnect/udev-rules/71-nvmf-*.rules.in``,
  linux-nvme/nvme-cli, https://github.com/linux-nvme/nvme-cli: NetApp ONTAP
  switched from ``round-robin`` to ``queue-depth`` in commit 48263a3e9
  ("udev-rules-ontap: switch to queue-depth iopolicy", Martin George, NetApp,
  2025-01-31), first released in v2.12; v2.11 set ``round-robin``.
* VMware, vSphere Storage 6.7, "Display SATPs for the Host" (the
  ``esxcli storage nmp satp list`` table of default PSPs) and "Multipathing
  Considerations" ("The default PSP for all devices claimed by VMW_SATP_ALUA
  is VMW_PSP_MRU"), 2018,
  https://docs.vmware.com/en/VMware-vSphere/6.7/com.vmware.vsphere.storage.doc/GUID-DB5BC795-E4D9-4350-9C5D-12BB3C0E6D99.html
* Cody Hosterman (Pure Storage), "NMP Multipathing rules for the FlashArray
  are now default", codyhosterman.com, 2017,
  https://www.codyhosterman.com/2017/07/nmp-multipathing-rules-for-the-flasharray-are-now-default/
  (ESXi 6.0 Express Patch 5, build 5572656, and 6.5 Update 1, build 5969303:
  a system SATP rule VMW_SATP_ALUA, VMW_PSP_RR, iops=1 for PURE FlashArray).
* Microsoft, ``mpclaim.exe`` usage text (``mpclaim /?``: "Round Robin if
  disk is non-ALUA, Round Robin with Subset otherwise"), Windows Server; and
  "MPIO Policies", 2009,
  https://learn.microsoft.com/en-us/previous-versions/windows/it-pro/windows-server-2008-R2-and-2008/dd851699(v=ws.11)
* The Linux kernel, ``drivers/nvme/host/multipath.c``: ``iopolicy`` defaults
  to ``numa`` (``nvme_core.iopolicy``), https://github.com/torvalds/linux

What a preset's source sets beyond the path selector (``no_path_retry``,
``dev_loss_tmo``, ``ctrl_loss_tmo``, ``fast_io_fail_tmo``) is a host setting,
not a policy parameter: :attr:`Preset.host` says it in pathsel's words
(``hosts[*].apd_timeout``), and ``--policy`` does not apply it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import closest

__all__ = ["Preset", "PRESETS", "preset", "resolve_preset", "PRESET_PREFIX"]

PRESET_PREFIX = "preset:"

_MPT = "multipath-tools 0.14.3 (c2fcdaf1), libmultipath/hwtable.c"
_MPT_URL = "https://github.com/opensvc/multipath-tools/blob/0.14.3/libmultipath/hwtable.c"
_NVME_URL = "https://github.com/linux-nvme/nvme-cli/blob/{tag}/nvmf-autoconnect/udev-rules/{file}"
_MPIO_URL = "https://learn.microsoft.com/en-us/previous-versions/windows/it-pro/windows-server-2008-R2-and-2008/dd851699(v=ws.11)"
_VSPHERE = 'vSphere Storage 6.7, "Display SATPs for the Host" (esxcli storage nmp satp list)'
_VSPHERE_URL = "https://docs.vmware.com/en/VMware-vSphere/6.7/com.vmware.vsphere.storage.doc/GUID-DB5BC795-E4D9-4350-9C5D-12BB3C0E6D99.html"


@dataclass(frozen=True)
class Preset:
    """A shipped default: the policy it sets, for which devices, from which file and version."""

    name: str
    spec: str  # what it runs, as a pathsel spec
    system: str  # "linux-dm", "linux-nvme", "esxi", "windows"
    matches: str  # the devices it applies to, as the source matches them
    setting: str  # the shipped setting, in the source's own words
    source: str  # file and version (tag, commit)
    url: str
    host: str = ""  # what the source also sets that is a host setting in pathsel
    vendor: str = ""  # multipath-tools' regular expressions for the SCSI vendor and product (dm presets)
    product: str = ""

    @property
    def label(self) -> str:
        return PRESET_PREFIX + self.name


def _dm(name: str, vendor: str, product: str, grouping: str, failback: str, extra: str, host: str = "") -> Preset:
    args = []
    if grouping != "group_by_prio":
        args.append(f"path_grouping_policy={grouping}")
    if failback != "manual":
        args.append(f"failback={failback}")
    spec = "dm:service-time" + (":" + ",".join(args) if args else "")
    setting = (
        f'vendor "{vendor}" product "{product}": path_selector "service-time 0" (the default), '
        f"path_grouping_policy {grouping}, failback {failback}" + (f", {extra}" if extra else "")
    )
    return Preset(
        name,
        spec,
        "linux-dm",
        f"{vendor} {product}",
        setting,
        _MPT,
        _MPT_URL,
        host,
        vendor="" if vendor == "*" else vendor,
        product="" if product.startswith("*") else product,
    )


def _nvme(name: str, model: str, iopolicy: str, tag: str, commit: str, file: str, host: str = "") -> Preset:
    return Preset(
        name,
        f"nvme:{iopolicy}",
        "linux-nvme",
        f'ATTR{{model}}=="{model}"',
        f'ATTR{{iopolicy}}="{iopolicy}"',
        f"nvme-cli {tag} ({commit}), nvmf-autoconnect/udev-rules/{file}",
        _NVME_URL.format(tag=tag, file=file),
        host,
    )


_PRESETS: tuple[Preset, ...] = (
    # -- Linux dm-multipath: multipath-tools' built-in hardware table ------------------------------------
    Preset(
        "dm-default",
        "dm:service-time",
        "linux-dm",
        "every device without a hwtable or multipath.conf entry",
        'path_selector "service-time 0", failback manual (libmultipath/defaults.h); detect_pgpolicy yes makes ALUA devices group_by_prio',
        "multipath-tools 0.14.3 (c2fcdaf1), libmultipath/defaults.h",
        "https://github.com/opensvc/multipath-tools/blob/0.14.3/libmultipath/defaults.h",
    ),
    _dm(
        "dm-netapp-ontap",
        "NETAPP",
        "LUN",
        "group_by_prio",
        "immediate",
        'prio ontap, features "2 pg_init_retries 50", no_path_retry queue, dev_loss_tmo infinity',
        host='no_path_retry queue: hosts[*].apd_timeout = "queue"',
    ),
    _dm("dm-pure-flasharray", "PURE", "FlashArray", "group_by_prio", "immediate", "prio alua, fast_io_fail_tmo 10, max_sectors_kb 4096"),
    _dm(
        "dm-ibm-2145",
        "IBM",
        "^2145",
        "group_by_prio",
        "immediate",
        "prio alua, no_path_retry queue (Storwize, SVC, FlashSystem)",
        host='no_path_retry queue: hosts[*].apd_timeout = "queue"',
    ),
    _dm(
        "dm-dellemc-powerstore",
        "DellEMC",
        "PowerStore",
        "group_by_prio",
        "immediate",
        "prio alua, no_path_retry 3, fast_io_fail_tmo 15",
        host='no_path_retry 3 (x polling_interval 5 s): hosts[*].apd_timeout = "15s"',
    ),
    _dm(
        "dm-dgc-unity-vnx",
        "^DGC",
        "^(RAID|DISK|VRAID)",
        "group_by_prio",
        "immediate",
        "prio emc, checker emc_clariion, no_path_retry 60 (300 s / polling_interval)",
        host='no_path_retry 60 (x 5 s): hosts[*].apd_timeout = "300s"',
    ),
    _dm(
        "dm-hpe-3par",
        "3PARdata",
        "VV",
        "group_by_prio",
        "immediate",
        "prio alua, no_path_retry 18, fast_io_fail_tmo 10, dev_loss_tmo infinity (3PAR, Primera, Alletra 9000)",
        host='no_path_retry 18 (x 5 s): hosts[*].apd_timeout = "90s"',
    ),
    _dm(
        "dm-hitachi-vsp",
        "(HITACHI|HP|HPE)",
        "^OPEN-",
        "group_by_prio",
        "immediate",
        "no_path_retry 10 (VSP, HUS VM, HPE XP)",
        host='no_path_retry 10 (x 5 s): hosts[*].apd_timeout = "50s"',
    ),
    _dm(
        "dm-emc-symmetrix",
        "EMC",
        "SYMMETRIX",
        "multibus",
        "manual",
        "no_path_retry 6 (Symmetrix, VMAX, PowerMax)",
        host='no_path_retry 6 (x 5 s): hosts[*].apd_timeout = "30s"',
    ),
    # -- Linux NVMe native multipath: nvme-cli's udev rules and the kernel's default ---------------------
    _nvme(
        "nvme-netapp-ontap",
        "NetApp ONTAP Controller",
        "queue-depth",
        "v2.12",
        "71fa5d93, rule changed in 48263a3e9",
        "71-nvmf-netapp.rules.in",
        host="ctrl_loss_tmo -1 for NVMe/TCP (never give up reconnecting)",
    ),
    _nvme(
        "nvme-netapp-ontap-2.11",
        "NetApp ONTAP Controller",
        "round-robin",
        "v2.11",
        "9f34fcb1",
        "71-nvmf-netapp.rules.in",
        host="ctrl_loss_tmo -1 for NVMe/TCP",
    ),
    _nvme("nvme-netapp-eseries", "NetApp E-Series", "round-robin", "v2.12", "71fa5d93", "71-nvmf-netapp.rules.in"),
    _nvme("nvme-hpe-alletra", "HPE Alletra", "round-robin", "v2.16", "faf7326a", "71-nvmf-hpe.rules.in", host="ctrl_loss_tmo -1 for NVMe/TCP"),
    _nvme("nvme-vastdata", "VASTData", "round-robin", "v2.14", "5a1553e2", "71-nvmf-vastdata.rules.in", host="ctrl_loss_tmo -1"),
    Preset(
        "nvme-kernel-default",
        "nvme:numa",
        "linux-nvme",
        "every NVMe subsystem without a rule",
        "nvme_core.iopolicy=numa (the kernel's default)",
        "Linux drivers/nvme/host/multipath.c (iopolicy)",
        "https://github.com/torvalds/linux/blob/master/drivers/nvme/host/multipath.c",
    ),
    # -- VMware ESXi NMP: SATP default PSPs and system SATP rules -------------------------------------------
    Preset(
        "esxi-satp-alua-default",
        "mru",
        "esxi",
        "VMW_SATP_ALUA (ALUA arrays without a vendor rule)",
        "Default PSP VMW_PSP_MRU",
        _VSPHERE,
        _VSPHERE_URL,
    ),
    Preset(
        "esxi-satp-default-aa",
        "fixed",
        "esxi",
        "VMW_SATP_DEFAULT_AA (active-active arrays without a vendor rule)",
        "Default PSP VMW_PSP_FIXED",
        _VSPHERE,
        _VSPHERE_URL,
    ),
    Preset(
        "esxi-satp-symm",
        "rr",
        "esxi",
        "VMW_SATP_SYMM (EMC Symmetrix)",
        "Default PSP VMW_PSP_RR (iops=1000, the PSP's default)",
        _VSPHERE,
        _VSPHERE_URL,
    ),
    Preset(
        "esxi-pure-flasharray",
        "rr:iops=1",
        "esxi",
        "vendor PURE model FlashArray",
        "system SATP rule: VMW_SATP_ALUA, VMW_PSP_RR, iops=1 (ESXi 6.0 EP5 build 5572656, 6.5 U1 build 5969303 and later)",
        'Hosterman, "NMP Multipathing rules for the FlashArray are now default" (2017), quoting the ESXi release notes',
        "https://www.codyhosterman.com/2017/07/nmp-multipathing-rules-for-the-flasharray-are-now-default/",
    ),
    # -- Windows MPIO, Microsoft DSM -------------------------------------------------------------------------
    Preset(
        "mpio-msdsm-alua",
        "mpio:rrws",
        "windows",
        "disks claimed by MSDSM that support ALUA",
        "Round Robin with Subset (no policy set for the disk, its hardware ID or MSDSM)",
        'Microsoft, mpclaim.exe usage text (mpclaim /?: load balance policy precedence); "MPIO Policies" (2009)',
        _MPIO_URL,
    ),
    Preset(
        "mpio-msdsm-non-alua",
        "mpio:rr",
        "windows",
        "disks claimed by MSDSM without ALUA",
        "Round Robin (no policy set for the disk, its hardware ID or MSDSM)",
        'Microsoft, mpclaim.exe usage text (mpclaim /?: load balance policy precedence); "MPIO Policies" (2009)',
        _MPIO_URL,
    ),
)

PRESETS: dict[str, Preset] = {p.name: p for p in _PRESETS}


def preset(name: str) -> Preset:
    """The preset called ``name`` (case-insensitive); ValueError with "did you mean" for any other name."""
    key = name.strip().lower()
    if key.startswith(PRESET_PREFIX):
        key = key[len(PRESET_PREFIX) :]
    if key in PRESETS:
        return PRESETS[key]
    if not key:
        raise ValueError(f"preset: needs a preset name ({', '.join(PRESETS)}; pathsel presets lists them)")
    guess = closest(key, list(PRESETS))
    hint = f"did you mean {PRESET_PREFIX}{guess}? " if guess else ""
    raise ValueError(f"unknown preset {name.strip()!r} ({hint}pathsel presets lists them)")


def resolve_preset(text: str) -> tuple[Preset, dict[str, str]]:
    """``"preset:NAME[:key=value,...]"`` -> (the preset, the keys after it).

    Raises ValueError naming the problem (an unknown preset, a key without ``=``).
    """
    body = text.strip()[len(PRESET_PREFIX) :]
    word, _, rest = body.partition(":")
    found = preset(word)
    keys: dict[str, str] = {}
    if rest.strip():
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise ValueError(f"{item.strip()!r} in policy spec {text.strip()!r} is not key=value")
            keys[key.strip()] = value.strip()
    return found, keys
