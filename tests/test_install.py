"""Installing pathsel as users do, in scratch virtual environments: minutes, not seconds (``-m slow``).

* The README's two commands, in order, in one checkout: the first installs
  pathsel and runs ``pathsel simulate``; the second reinstalls it editable
  with the test tools, after which ``pathsel --version`` and a notebook run.
  Then installs, reinstalls, editable installs and an uninstall in turn.
  After every step, nothing lies in site-packages that the install did not
  record (numba's cache goes to ``PATHSEL_CACHE_DIR``), and an uninstall
  leaves nothing of pathsel behind.
* The wheel and the sdist ``python -m build`` makes pass ``twine check``;
  the wheel alone, in a fresh environment and an empty folder, runs
  ``pathsel simulate``, ``pathsel validate --quick`` and an example.

The checkout is a copy of this one's tracked and untracked (not ignored)
files, as ``git clone`` would give once they are committed. pip installs from
the configured package index. Both tests share one cold numba cache in a
temporary folder: the first compiles into it, the second reuses it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from pathsel.data import EXAMPLES

from .conftest import ROOT

pytestmark = pytest.mark.slow

STEP_TIMEOUT_S = 1200  # one install or run; they take seconds to a minute


def _readme_commands() -> tuple[str, str]:
    first, second = re.findall(r"```sh\n(.+?)\n```", (ROOT / "README.md").read_text())[:2]
    return first, second


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    path = tmp_path_factory.mktemp("install")
    yield path
    shutil.rmtree(path, ignore_errors=True)  # two virtual environments, a checkout and a numba cache: about 2 GB


@pytest.fixture(scope="module")
def env(scratch) -> dict[str, str]:
    """The environment of every command: numba's cache in the scratch folder, no outer venv or cache settings."""
    out = {
        k: v
        for k, v in os.environ.items()
        if k
        not in {
            "VIRTUAL_ENV",
            "PYTHONPATH",
            "PYTHONHOME",
            "PYTHONDONTWRITEBYTECODE",
            "NUMBA_CACHE_DIR",
            "PATHSEL_CACHE_DIR",
        }
    }
    out["PATHSEL_CACHE_DIR"] = str(scratch / "cache")
    for var in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):  # no user kernels or profiles
        out[var] = str(scratch / "jupyter" / var.lower())
    return out


@pytest.fixture(scope="module")
def checkout(scratch) -> Path:
    """A copy of the working tree: what ``git clone`` gives, uncommitted changes included; nothing ignored."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    dest = scratch / "checkout"
    for name in filter(None, listed.decode().split("\0")):
        src, dst = ROOT / name, dest / name
        if not (src.is_symlink() or src.is_file()):
            continue  # deleted, not yet committed
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            dst.symlink_to(os.readlink(src))
        else:
            shutil.copy2(src, dst)
    return dest


def _sh(command: str | list[str], cwd: Path, env: dict[str, str]) -> str:
    """Run a command (a string: in bash, as the README's are typed); fail with its output if it fails."""
    args = ["bash", "-c", command] if isinstance(command, str) else command
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=STEP_TIMEOUT_S)
    if proc.returncode != 0:
        pytest.fail(f"{command!r} in {cwd} exited {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}")
    return proc.stdout


def _site_packages(venv: Path) -> Path:
    (site,) = (venv / "lib").glob("python3*/site-packages")
    return site


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink()}


def _recorded(site: Path) -> set[str]:
    """The files pathsel's installed RECORD lists, relative to site-packages (scripts in bin/ left out)."""
    records = list(site.glob("pathsel-*.dist-info/RECORD"))
    assert len(records) == 1, f"pathsel installed {len(records)} times: {records}"
    names = {line.rsplit(",", 2)[0] for line in records[0].read_text().splitlines() if line}
    return {os.path.normpath(n) for n in names if not n.startswith("..")}


def _ours(site: Path) -> set[str]:
    return {f for f in _files(site) if "pathsel" in f.lower()}


def _numba_cache_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.suffix in (".nbi", ".nbc"))


def _assert_clean(site: Path, package: Path | None = None) -> None:
    """Every pathsel file in site-packages is one its install recorded; no numba cache in site-packages or the package."""
    unrecorded = sorted(_ours(site) - _recorded(site))
    assert not unrecorded, f"in site-packages, not recorded by pathsel's install: {unrecorded[:20]}"
    assert not _numba_cache_files(site), f"numba's cache in site-packages: {_numba_cache_files(site)[:20]}"
    if package is not None:
        assert not _numba_cache_files(package), f"numba's cache in the package: {_numba_cache_files(package)[:20]}"


class _Watch:
    """Asserts a block writes nothing into site-packages."""

    def __init__(self, site: Path):
        self.site = site

    def __enter__(self):
        self.before = _files(self.site)
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            added = _files(self.site) - self.before
            assert added == set(), f"written into site-packages by a run: {sorted(added)[:20]}"


NOTEBOOK_RUNNER = """
import sys
from pathlib import Path

import nbclient
import nbformat

path = Path(sys.argv[1])
nb = nbformat.read(path, as_version=4)
nb.cells.append(nbformat.v4.new_code_cell("import sys, pathsel; print(sys.prefix); print(pathsel.__file__)"))
nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
print(nb.cells[-1].outputs[0]["text"], end="")
"""


def test_readme_commands_in_order_then_any_install_order_leave_site_packages_clean(checkout, env, scratch):
    install_and_run, install_and_test = _readme_commands()
    test_command = " && .venv/bin/python -m pytest"
    assert install_and_test.endswith(test_command)
    venv = checkout / ".venv"
    cache = Path(env["PATHSEL_CACHE_DIR"])

    # 1. The README's first command: install, and run the default scenario (compiling the fast engine).
    out = _sh(install_and_run, checkout, env)
    assert "latency RR" in out
    site = _site_packages(venv)
    _assert_clean(site)
    assert _numba_cache_files(cache), "the run compiled nothing into PATHSEL_CACHE_DIR"

    # 2. The second command's install (its pytest is this suite), then pathsel --version and a notebook.
    _sh(install_and_test.removesuffix(test_command), checkout, env)
    _assert_clean(site, checkout / "pathsel")
    version = re.search(r'__version__ = "(.+)"', (checkout / "pathsel" / "version.py").read_text()).group(1)
    with _Watch(site):
        assert _sh([str(venv / "bin" / "pathsel"), "--version"], checkout, env) == f"pathsel {version}\n"
        prefix, module = _sh(
            [str(venv / "bin" / "python"), "-c", NOTEBOOK_RUNNER, str(checkout / "notebooks" / "01-quickstart.ipynb")], checkout, env
        ).splitlines()
    assert (Path(prefix), Path(module)) == (venv, checkout / "pathsel" / "__init__.py")  # the kernel ran the editable install
    _assert_clean(site, checkout / "pathsel")

    # 3. Uninstall: nothing of pathsel is left.
    def uninstall() -> None:
        _sh(".venv/bin/pip uninstall -q -y pathsel", checkout, env)
        left = sorted(_ours(site))
        assert not left, f"left in site-packages by pip uninstall: {left[:20]}"
        assert not (venv / "bin" / "pathsel").exists()

    uninstall()

    # 4. Installs in any order: editable, regular over editable, regular again, editable over regular; a run after each.
    elsewhere = scratch / "elsewhere"
    elsewhere.mkdir()
    for install in (".venv/bin/pip install -q -e .", ".venv/bin/pip install -q .", ".venv/bin/pip install -q .", ".venv/bin/pip install -q -e ."):
        _sh(install, checkout, env)
        _assert_clean(site, checkout / "pathsel")
        with _Watch(site):
            out = _sh([str(venv / "bin" / "pathsel"), "simulate", "--duration", "0.2s", "-q"], elsewhere, env)
        assert "latency RR" in out, install
        _assert_clean(site, checkout / "pathsel")
    uninstall()
    assert sorted(p.name for p in elsewhere.iterdir()) == []  # a run writes nothing where it runs


def _wheel_members(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as z:
        return {n: z.read(n) for n in z.namelist()}


def _sdist_members(sdist: Path) -> dict[str, bytes]:
    with tarfile.open(sdist) as t:
        return {m.name.split("/", 1)[1]: t.extractfile(m).read() for m in t.getmembers() if m.isfile()}


def test_the_wheel_alone_runs_simulate_validate_and_an_example(checkout, env, scratch):
    dist = scratch / "dist"
    # an sdist, then the wheel built from it (so the sdist is complete); built from the copy, not this checkout
    _sh([sys.executable, "-m", "build", "--outdir", str(dist), str(checkout)], scratch, env)
    (wheel,) = dist.glob("pathsel-*.whl")
    (sdist,) = dist.glob("pathsel-*.tar.gz")
    out = _sh([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)], scratch, env)
    assert out.count("PASSED") == 2

    # the examples, byte for byte, in both
    examples = {
        f"pathsel/data/examples/{p.relative_to(EXAMPLES).as_posix()}": p.read_bytes()
        for p in EXAMPLES.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    in_wheel, in_sdist = _wheel_members(wheel), _sdist_members(sdist)
    assert {n: in_wheel.get(n) for n in examples} == examples
    assert {n: in_sdist.get(n) for n in examples} == examples
    assert not [n for n in in_wheel if n.startswith(("sims/", "tests/")) or n.endswith((".nbi", ".nbc", ".pyc"))]

    # the wheel alone: a fresh venv, run from an empty folder
    venv = scratch / "wheel-venv"
    _sh([sys.executable, "-m", "venv", str(venv)], scratch, env)
    _sh([str(venv / "bin" / "pip"), "install", "-q", str(wheel)], scratch, env)
    site = _site_packages(venv)
    here = scratch / "empty"
    here.mkdir()
    pathsel = str(venv / "bin" / "pathsel")
    with _Watch(site):
        assert "latency RR" in _sh([pathsel, "simulate"], here, env)
        out = _sh([pathsel, "validate", "--quick"], here, env)
        for case in (EXAMPLES / "validation").glob("*.toml"):
            assert case.stem in out
        assert re.search(r"^(\d+) of \1 checks passed \(\d+ cases\)$", out, re.MULTILINE), out[-500:]
        _sh([pathsel, "example", "cloud-metro-az", "-o", "."], here, env)
        assert "Cloud metro cluster" in _sh([pathsel, "simulate", "cloud-metro-az.toml", "-q"], here, env)
    assert sorted(_files(here)) == ["cloud-metro-az.toml", "data/ping-cross-az.txt", "data/ping-same-az.txt"]
    _assert_clean(site)
