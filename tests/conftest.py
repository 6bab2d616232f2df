from __future__ import annotations

import fcntl
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SIMS = ROOT / "sims"

# How the suite shares two workers (pyproject.toml's addopts: --dist loadfile --no-loadscope-reorder). xdist hands out
# units of work in the order they are collected, the next one to whichever worker is nearly idle. A file is one unit,
# so its module fixtures are built once, on one worker; but the files of SPLIT are one unit a test (they are long and
# build nothing costly to share), so both workers share them. The longest units go first (FIRST, from
# `pytest --durations`): the run no longer ends with one worker on a long file (the install tests, minutes) while the
# other has nothing left to do.
FIRST = (
    "test_install.py",
    "test_engines.py::test_the_late_handlers_are_typed_as_the_loop_calls_them",  # a cold compile: minutes
    "test_engines.py::test_engines_agree_on_every_policy",
    "test_engines.py",
    "test_analytic.py",
    "test_docs_commands.py",
    "test_fabric.py",
    "test_library_37.py",
    "test_dsnro.py",
    "test_docs_and_notebooks.py",
    "test_oracle.py",
    "test_properties.py",
)
SPLIT = frozenset({"test_engines.py", "test_properties.py", "test_oracle.py"})


def _rank(nodeid: str) -> int:
    test = nodeid.removeprefix("tests/")
    return next((i for i, first in enumerate(FIRST) if test == first or test.startswith((first + "::", first + "["))), len(FIRST))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: _rank(item.nodeid))  # stable: a file's tests stay together, in the order written


class _Scheduler:
    """Registered when xdist is (its hook is unknown to pytest without it)."""

    @staticmethod
    def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
        """--dist loadfile, but a test of SPLIT's files is a unit of its own."""
        if config.getvalue("dist") != "loadfile":
            return None
        from xdist.scheduler import LoadFileScheduling

        class FilesAndSplitTests(LoadFileScheduling):
            def _split_scope(self, nodeid: str) -> str:
                file = super()._split_scope(nodeid)
                return nodeid if Path(file).name in SPLIT else file

        return FilesAndSplitTests(config, log)


class _CompileOnce:
    """The fast engine's compile lock (warm.prepare's), held across the workers too.

    Both workers share numba's cache directory. On an empty cache both would
    compile the engine at once, each with a helper process: four compilers on
    two cores, twice the work. Under this lock the first worker to need the
    engine (or a built-in policy) compiles it into the cache while the other
    waits, and then loads it from there in a fraction of a second.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __enter__(self) -> None:
        from pathsel.jit import cache_dir

        self.inner.acquire()
        self.file = None
        try:
            folder = cache_dir()  # read now: a test may point PATHSEL_CACHE_DIR elsewhere
            folder.mkdir(parents=True, exist_ok=True)
            self.file = open(folder / "tests-compile.lock", "a")  # held until __exit__
            fcntl.flock(self.file, fcntl.LOCK_EX)
        except BaseException:  # an unwritable cache directory: fail this test, never hang the worker's next compile
            if self.file is not None:
                self.file.close()
            self.inner.release()
            raise

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.file, fcntl.LOCK_UN)
        self.file.close()
        self.inner.release()


def pytest_configure(config: pytest.Config) -> None:
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_Scheduler(), "pathsel-scheduler")
    if hasattr(config, "workerinput"):  # an xdist worker: the other one shares the cache
        from pathsel.engine.fast import warm

        warm._lock = _CompileOnce(warm._lock)  # type: ignore[assignment]


@pytest.fixture
def testdrive_path() -> Path:
    return SIMS / "esxi-latency-testdrive.toml"


@pytest.fixture(autouse=True)
def _registered_policies_do_not_leak():
    """A policy a test registers (the docs' and notebooks' examples do) is gone for the next test."""
    from pathsel.policies.registry import POLICY_DEFS

    before = dict(POLICY_DEFS)
    yield
    if POLICY_DEFS != before:
        POLICY_DEFS.clear()
        POLICY_DEFS.update(before)
