"""Every command README.md and docs/ show runs and exits 0.

The convention, for README.md and every page of docs/:

* Every fenced block names its language: ``sh``, ``python``, ``text`` or
  ``toml``.
* ``sh`` and ``python`` blocks are **run**, page by page in the order they
  appear, unless the line before the fence is ``<!-- not run: REASON -->``
  (installs, the test suite itself). ``text`` is output, synopses and
  fragments; ``toml`` is checked by tests/test_docs_and_notebooks.py.

A page's blocks run in one fresh directory holding a copy of ``sims/`` and of
the import samples ``tests/data/import/`` (as in a checkout), so ``sims/...``
and ``tests/data/import/...`` paths work; the README's tour and getting-started.md write their files
(``report.html``, ``r.parquet``) under ``out=$(mktemp -d)``, never into that copy, which is checked; the python blocks of a page share one namespace. ``sh`` blocks run
under ``bash -e -o pipefail``: every command of a block must succeed.

To keep the suite short, runs are cut, never skipped: ``pathsel simulate``,
``report`` and ``sweep`` get ``--duration 1s`` in place of any duration they
give, ``pathsel validate`` gets ``--quick`` in place of ``--full`` and, unless the command chooses
an engine, ``--engine fast``; in python, ``pathsel.simulate``, ``sweep`` and
``simulate_seeds`` run at most 1 s. Figures are not displayed. A validation
that already passed in the session with the same arguments is not run twice.
"""

from __future__ import annotations

import inspect
import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

import pathsel

from .conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LANGUAGES = {"sh", "python", "text", "toml"}
RUNNABLE = {"sh", "python"}
CAP_S = 1.0  # the longest measured time a docs command runs here
NOT_RUN = re.compile(r"^[ \t]*<!-- not run: \S.*-->[ \t]*$")

_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence
    lang: str
    code: str
    marker: str | None  # the "not run" comment before the fence, if any

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.lang in RUNNABLE and self.marker is None


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    out = []
    for m in _FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        before = [ln for ln in text[: m.start()].splitlines() if ln.strip()]
        marker = before[-1].strip() if before and before[-1].strip().startswith("<!--") else None
        lang = (m.group("info").split() or [""])[0]
        out.append(Block(page, line, lang, textwrap.dedent(m.group("body")), marker))
    return out


# -- the convention ----------------------------------------------------------------


def test_every_fenced_block_names_its_language():
    bad = [f"{b.where} ({b.lang or 'no language'})" for page in PAGES for b in blocks(page) if b.lang not in LANGUAGES]
    assert not bad, f"fences need one of {sorted(LANGUAGES)} (text for output and synopses): {', '.join(bad)}"


def test_not_run_marks_give_a_reason_and_precede_a_command():
    bad = []
    for page in PAGES:
        for b in blocks(page):
            if b.marker is None:
                continue
            if not NOT_RUN.match(b.marker) or b.lang not in RUNNABLE:
                bad.append(f"{b.where}: {b.marker!r} before a {b.lang or 'bare'} block")
    assert not bad, "write <!-- not run: REASON --> on the line before a sh or python block: " + "; ".join(bad)


def test_the_readme_tour_is_run():
    tour = [b for b in blocks(ROOT / "README.md") if b.runs]
    commands = [ln.split("#")[0].strip() for b in tour if b.lang == "sh" for ln in b.code.splitlines()]
    assert 'pathsel sweep sims/*.toml --param latency.latency_eval_time=30000,180000 --out "$out"/r.parquet' in commands
    assert 'pathsel recommend "$out"/r.parquet' in commands
    assert commands[0] == "out=$(mktemp -d)"  # the tour's files go to a temporary folder, not the checkout
    assert any(c.startswith("pathsel top ") and "--text" in c for c in commands)  # the live view's frames as text
    assert any(c.startswith("pathsel top ") and " -b " in c for c in commands)  # esxtop -b's CSV
    assert len([b for b in tour if b.lang == "python"]) >= 2


def test_the_shim_cuts_runs_and_keeps_the_rest():
    assert _shorten(["simulate", "--duration", "30s", "--seed", "7"]) == ["simulate", "--seed", "7", "--duration", "1s"]
    assert _shorten(["sweep", "a.toml", "--duration=2min", "--out", "r.csv"]) == ["sweep", "a.toml", "--out", "r.csv", "--duration", "1s"]
    assert _shorten(["validate"]) == ["validate", "--quick", "--engine", "fast"]
    assert _shorten(["validate", "--engine", "both"]) == ["validate", "--engine", "both", "--quick"]
    assert _shorten(["validate", "--full"]) == ["validate", "--quick", "--engine", "fast"]
    assert _shorten(["recommend", "r.parquet"]) == ["recommend", "r.parquet"]


# -- running them ---------------------------------------------------------------------


def _shorten(args: list[str]) -> list[str]:
    """The arguments a docs command runs with here (see the module's words)."""
    if not args:
        return args
    out = list(args)
    if out[0] in ("simulate", "report", "sweep"):
        kept = []
        skip = False
        for a in out:
            if skip:
                skip = False
                continue
            if a == "--duration":
                skip = True
                continue
            if a.startswith("--duration="):
                continue
            kept.append(a)
        return kept + ["--duration", f"{CAP_S:g}s"]
    if out[0] == "validate":
        out = [a for a in out if a != "--full"]  # the long lengths are cut to the quick ones, as every run is
        if "--quick" not in out:
            out.append("--quick")
        if "--engine" not in out and not any(a.startswith("--engine=") for a in out):
            out += ["--engine", "fast"]
    return out


_SHIM = """#!{python}
import sys
from pathlib import Path

from pathsel.cli import main

CAP_S = {cap!r}

{shorten}

args = _shorten(sys.argv[1:])
# pathsel validate is deterministic and the slowest command: the same validation twice in one session
# (README and validation.md both show it) passes or fails alike, so the second time says so and stops.
done = Path(__file__).with_name("validated-" + "-".join(sorted(args)).replace("/", "_"))
if args[:1] == ["validate"] and done.exists():
    print("pathsel validate: the same validation already ran in this test session and passed")
    sys.exit(0)
status = main(args)
if args[:1] == ["validate"] and status == 0:
    done.touch()
sys.exit(status)
"""


@pytest.fixture(scope="module")
def shim_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory whose ``pathsel`` runs this checkout's CLI through _shorten, and whose python3 is this one."""
    bin_dir = tmp_path_factory.mktemp("bin")
    shim = bin_dir / "pathsel"
    shim.write_text(_SHIM.format(python=sys.executable, cap=CAP_S, shorten=inspect.getsource(_shorten)), encoding="utf-8")
    shim.chmod(0o755)
    for name in ("python3", "python"):
        (bin_dir / name).symlink_to(sys.executable)
    return bin_dir


def _capped(fn):
    def call(*args, duration=None, **kwargs):
        return fn(*args, duration=CAP_S if duration is None else min(duration, CAP_S), **kwargs)

    return call


# The pages a new user runs from the checkout: every file their commands write goes to a temporary folder
# (out=$(mktemp -d), or a pipe), so that running them leaves the checkout as it was.
TOUR_PAGES = (ROOT / "README.md", ROOT / "docs" / "getting-started.md")


def _listing(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.rglob("*")) if p.is_file()}


def _pages_with_commands() -> list:
    return [pytest.param(p, id=str(p.relative_to(ROOT))) for p in PAGES if any(b.runs for b in blocks(p))]


@pytest.mark.parametrize("page", _pages_with_commands())
def test_page_commands_run(page: Path, tmp_path: Path, shim_bin: Path, monkeypatch: pytest.MonkeyPatch):
    import plotly.graph_objects as go

    work = tmp_path / "work"
    work.mkdir()
    shutil.copytree(ROOT / "sims", work / "sims")
    shutil.copytree(ROOT / "tests" / "data" / "import", work / "tests" / "data" / "import")
    (tmp_path / "tmp").mkdir()  # mktemp -d's folders, outside the checkout's copy and removed with it
    env = {**os.environ, "PATH": f"{shim_bin}{os.pathsep}{os.environ.get('PATH', '')}", "TMPDIR": str(tmp_path / "tmp")}
    monkeypatch.chdir(work)
    monkeypatch.setattr(go.Figure, "show", lambda self, *a, **k: None)  # no browser
    for name in ("simulate", "sweep", "simulate_seeds"):
        monkeypatch.setattr(pathsel, name, _capped(getattr(pathsel, name)))
    namespace: dict[str, object] = {"__name__": "__docs__"}
    before = _listing(work)
    for b in blocks(page):
        if not b.runs:
            continue
        if b.lang == "python":
            # Pad with newlines so that a traceback points at the line in the page.
            exec(compile("\n" * b.line + b.code, str(page), "exec"), namespace)
            continue
        done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", b.code], cwd=work, env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, (
            f"{b.where}: exit status {done.returncode}\n{b.code}\n--- stdout (end)\n{done.stdout[-2000:]}\n--- stderr (end)\n{done.stderr[-3000:]}"
        )
    if page in TOUR_PAGES:
        after = _listing(work)
        written = sorted(k for k in after.keys() | before.keys() if after.get(k) != before.get(k))
        assert not written, f"{page.name}: the commands wrote into the checkout (write them under out=$(mktemp -d)): {written[:10]}"
