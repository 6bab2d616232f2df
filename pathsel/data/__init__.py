"""Files shipped with pathsel: the example scenarios, the measurement files they read and the validation cases.

``pathsel/data/examples/`` holds the only copy. A checkout's ``sims/`` is a
symbolic link to it, so ``pathsel simulate sims/...`` in a checkout and
``pathsel example`` or ``pathsel validate`` after ``pip install pathsel`` read
the same files: nothing is copied at build time, and there is no second copy
to drift (tests/test_examples.py checks the link). The embedded default
scenario is one of them (:data:`DEFAULT_SCENARIO`).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["EXAMPLES", "VALIDATION", "DEFAULT_SCENARIO"]

EXAMPLES = Path(__file__).resolve().parent / "examples"
"""The example scenarios (a checkout's ``sims/``); ``data/`` inside holds the measurement files some read."""

VALIDATION = EXAMPLES / "validation"
"""The validation cases ``pathsel validate`` runs by default."""

DEFAULT_SCENARIO = EXAMPLES / "esxi-latency-testdrive.toml"
"""The embedded default: the founding ESXi latency round robin test drive (Hosterman 2018)."""
