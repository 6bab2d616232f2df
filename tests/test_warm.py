"""The first compile: `pathsel warm`, the passes' level, and a progress bar that moves while numba works."""

from __future__ import annotations

import io

import pytest
from numba.core import config

from pathsel.cli import main
from pathsel.engine.fast import warm
from pathsel.jit import PASS_LEVEL, light_passes


def test_light_passes_sets_the_level_and_restores_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NUMBA_OPT", raising=False)
    before = int(config.OPT)
    with light_passes():
        assert int(config.OPT) == PASS_LEVEL
    assert int(config.OPT) == before


def test_light_passes_restores_the_level_after_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NUMBA_OPT", raising=False)
    before = int(config.OPT)
    with pytest.raises(RuntimeError), light_passes():
        raise RuntimeError("a compile failed")
    assert int(config.OPT) == before


def test_an_explicit_numba_opt_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NUMBA_OPT", "3")
    before = int(config.OPT)
    with light_passes():
        assert int(config.OPT) == before


@pytest.mark.parametrize(
    ("usual", "elapsed", "shown", "total_at_least"),
    [
        (20, 0.0, 0, 20),  # starts at 0 of the usual figure
        (20, 10.4, 10, 20),  # halfway: the usual total stays
        (20, 19.6, 20, 21),  # near the end: the total moves ahead, the bar never reads 100 % before it is done
        (20, 95.0, 95, 100),  # a busy machine: five times the usual figure, still short of the end
    ],
)
def test_the_bar_moves_with_time_and_stays_short_of_the_end(usual: int, elapsed: float, shown: int, total_at_least: int) -> None:
    clock = warm._Clock(usual)
    try:
        clock.done.set()  # stop the thread: the test drives the bar
        clock.thread.join()
        clock.bar.fp = io.StringIO()
        clock.tick()
        clock.advance(elapsed)
        assert clock.bar.n == shown
        assert clock.bar.total >= total_at_least
        assert clock.bar.n < clock.bar.total
        assert clock.functions == 1
    finally:
        clock.bar.close()


def test_warm_compiles_the_default_scenarios_policies(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["warm"]) == 0
    err = capsys.readouterr().err
    assert "pathsel warm: the fast engine and" in err
    assert "latency" in err and "rr" in err
    assert warm.is_warm()


def test_warm_quiet_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["warm", "-q", "--policy", "rr:iops=1"]) == 0
    out, err = capsys.readouterr()
    assert out == "" and err == ""


def test_warm_names_a_python_policy_and_compiles_the_rest(capsys: pytest.CaptureFixture[str]) -> None:
    from pathsel.studies.validate import default_dir

    case = default_dir() / "mva-single-server.toml"  # a random split: a Python policy, reference engine only
    assert main(["warm", str(case)]) == 0
    err = capsys.readouterr().err
    assert "pathsel warm: the fast engine is compiled" in err
    assert "Python, run on the reference engine" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["warm", "no-such-file.toml"], "no-such-file.toml"),
        (["warm", "--policy", "rr:iops=0"], "iops"),
        (["warm", "--policy", "bogus"], "bogus"),
        (["warm", "--all", "--policy", "rr:iops=1"], "--all"),
        (["warm", "--all", "no-such-file.toml"], "--all"),
    ],
)
def test_warm_refuses_bad_input_with_one_line(argv: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("pathsel: error:") and says in lines[0]
    assert "Traceback" not in err


def test_every_module_with_cached_compiled_code_keys_the_cache() -> None:
    """The compile cache is keyed on kernel_sources(): a module whose functions numba compiles and caches (pathsel.jit's
    @hot, @jit, @entry, or a record type it registers) but left out of it would be served stale after an edit. The
    modules that only drive compiled code from Python are left out (editing them recompiles nothing); warm.py's
    late_handlers is compiled but never cached."""
    import re

    from pathsel.jit import PACKAGE_DIR, kernel_sources

    listed = {p.resolve() for p in kernel_sources()}
    engine = PACKAGE_DIR / "engine"
    compiled = {
        p.resolve() for p in engine.rglob("*.py") if re.search(r"^@(hot|jit|entry|structref\.register)\b", p.read_text(encoding="utf-8"), re.M)
    }
    assert {engine / "recorder" / "record.py", engine / "recorder" / "bookkeeping.py", engine / "fast" / "io_life.py"} <= compiled
    assert compiled <= listed, sorted(str(p) for p in compiled - listed)
    for python_only in ("fast/run.py", "fast/state.py", "fast/fields.py", "fast/feed.py", "fast/warm.py", "recorder/readout.py"):
        assert (engine / python_only).resolve() not in listed


def test_a_changed_kernel_source_changes_the_cache_key(tmp_path) -> None:
    """Each listed file's contents go into the key (source_hash): an edit to the recorder's bookkeeping recompiles."""
    from pathsel.jit import kernel_sources, source_hash

    sources = kernel_sources()
    book = next(p for p in sources if p.parts[-2:] == ("recorder", "bookkeeping.py"))
    edited = tmp_path / "bookkeeping.py"
    edited.write_text(book.read_text(encoding="utf-8") + "\n# an edit\n", encoding="utf-8")
    assert source_hash(sources) != source_hash([edited if p == book else p for p in sources])
