from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SIMS = ROOT / "sims"


@pytest.fixture
def testdrive_path() -> Path:
    return SIMS / "esxi-latency-testdrive.toml"
