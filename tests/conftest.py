from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SIMS = ROOT / "sims"


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
