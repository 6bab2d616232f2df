"""The ``[[policies]]`` section: the policies a run compares, as spec strings or tables (``spec``, ``label``,
``preferred_array``, ``expect``, a policy per volume). The specs are parsed into runs in
:mod:`pathsel.scenario.runs`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .values import Name, Strict

__all__ = ["Expectation", "PolicyEntry", "policy_entry"]


class Expectation(Strict):
    """A measured figure the run should reproduce (shown beside the simulated one)."""

    iops: float | None = Field(None, gt=0, strict=True, allow_inf_nan=False)
    tolerance: float = Field(0.15, gt=0, le=1, strict=True, allow_inf_nan=False)
    source: str = ""


def policy_entry(value: Any) -> Any:
    if isinstance(value, str):
        return {"spec": value}
    if not isinstance(value, (dict, PolicyEntry)):
        raise ValueError(f'must be a spec string such as "rr:iops=1" or a table with a spec key, got {value!r}')
    return value


class PolicyEntry(BaseModel):
    """A policy to compare. Keys beside ``spec`` are policy parameters (checked by name)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    spec: Name | None = None  # required unless volumes names a policy for every volume (runs.py says so)
    label: str | None = None
    preferred_array: str | None = None
    expect: Expectation | None = None
    # one assignment of policies to devices (issue 32): volume name -> spec string or { spec = ..., key = value }
    volumes: dict[str, str | dict[str, Any]] | None = None

    @property
    def extra_params(self) -> dict[str, Any]:
        return dict(self.model_extra or {})
