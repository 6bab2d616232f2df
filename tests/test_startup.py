"""Start-up (issue 35): the commands that answer without simulating import neither numba nor pandas nor plotly.

``pathsel --version``, ``--help``, a subcommand's ``--help`` and the listing commands ran for 1.3-4 s because
``import pathsel`` loaded the engines (numba, llvmlite), pandas and SciPy. The package and the CLI now import
those in the functions that need them (PEP 562 module ``__getattr__`` for the package's names). These tests check
the behaviour in a fresh interpreter, not a wall-clock figure (that is ``benchmarks/startup.py``'s job).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numba", "llvmlite", "pandas", "plotly")

# Runs the CLI's main in this fresh interpreter, then prints which heavy modules it imported.
PROBE = """
import contextlib, io, json, sys
from pathsel.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        code = main(sys.argv[1:])
    except SystemExit as e:
        code = e.code
print(json.dumps({"code": code, "out": out.getvalue(), "loaded": [m for m in %r if m in sys.modules]}))
""" % (HEAVY,)


def _run(*argv: str, code: str = PROBE) -> dict[str, object]:
    proc = subprocess.run([sys.executable, "-c", code, *argv], cwd=ROOT, capture_output=True, text=True, timeout=300, check=True)
    doc: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return doc


@pytest.mark.parametrize(
    "argv",
    [
        ["--version"],
        ["--help"],
        ["simulate", "--help"],
        ["validate", "--help"],
        ["import", "--help"],
        ["presets"],
        ["policies"],
        ["policies", "--presets"],
        ["schema"],
        ["example"],
    ],
    ids=" ".join,
)
def test_answers_without_heavy_imports(argv: list[str]) -> None:
    doc = _run(*argv)
    assert doc["code"] == 0
    assert doc["out"], "printed nothing"
    assert doc["loaded"] == [], f"pathsel {' '.join(argv)} imported {doc['loaded']}"


def test_version_is_the_package_version() -> None:
    from pathsel.version import __version__

    assert __version__ in str(_run("--version")["out"])


def test_import_pathsel_is_light_and_every_public_name_still_imports() -> None:
    code = """
import json, sys
import pathsel
light = [m for m in %r if m in sys.modules]
missing = [n for n in pathsel.__all__ if n not in ("plots", "report") and getattr(pathsel, n, None) is None]
print(json.dumps({"code": 0, "out": "", "loaded": light, "missing": missing}))
""" % (HEAVY,)
    doc = _run(code=code)
    assert doc["loaded"] == []
    assert doc["missing"] == []


def test_from_pathsel_import_every_name_in_all() -> None:
    import pathsel

    names = [n for n in pathsel.__all__ if n not in ("plots", "report")]
    namespace: dict[str, object] = {}
    exec(f"from pathsel import {', '.join(names)}", namespace)  # the documented spelling, name by name
    assert all(namespace[n] is getattr(pathsel, n) for n in names)
    assert "simulate" in dir(pathsel)
    with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
        pathsel.nonesuch  # noqa: B018


def test_lazy_policies_package_keeps_its_names() -> None:
    import pathsel.policies as policies

    missing = [n for n in policies.__all__ if getattr(policies, n, None) is None]
    assert missing == []
    assert policies.build_policy("rr:iops=3").name == "rr"
    with pytest.raises(AttributeError):
        policies.NoSuchPolicy  # noqa: B018


def test_library_api_still_simulates_as_documented() -> None:
    """``import pathsel; pathsel.simulate(...)`` in a fresh interpreter: the lazy names load what they need."""
    code = """
import json, sys
import pathsel
result = pathsel.simulate(duration=0.01, engine="reference", policies=["rr:iops=1"])
frame = result.summary()
print(json.dumps({"code": 0, "out": str(len(frame)), "loaded": [m for m in ("pandas",) if m in sys.modules]}))
"""
    doc = _run(code=code)
    assert doc["out"] == "1"
    assert doc["loaded"] == ["pandas"]  # summary() is a DataFrame: pandas arrives when a table is asked for


def test_shipped_policy_listing_is_current() -> None:
    """pathsel/data/policies.txt was made from today's policy sources and says what the registry says."""
    from pathsel.policies import listing

    head = listing.LISTING.read_text(encoding="utf-8").partition("\n")[0]
    assert head.endswith(listing.sources_hash()), "policy sources changed: run python -m pathsel.policies.listing --write"
    assert listing.text() == listing.build()


def test_stale_listing_is_never_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pathsel.policies import listing

    stale = tmp_path / "policies.txt"
    stale.write_text("# pathsel policies, made from sources hashing 0000\nrr  an old summary\n", encoding="utf-8")
    monkeypatch.setattr(listing, "LISTING", stale)
    assert listing.text() == listing.build()
    monkeypatch.setattr(listing, "LISTING", tmp_path / "missing.txt")
    assert listing.text() == listing.build()
