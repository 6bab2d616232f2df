"""docs/scenario-reference.md cannot drift from the schema: every key is documented, and only real keys are."""

from __future__ import annotations

import re

from pydantic import BaseModel

from pathsel.scenario import schema

from .conftest import ROOT

SECTIONS = {
    "Top-level keys": schema.ScenarioModel,
    "`[[arrays]]`": schema.ArrayConfig,
    "`[replication]`": schema.ReplicationConfig,
    "`[[hosts]]`": schema.HostConfig,
    "`[[paths]]`": schema.PathGroup,
    "`[[workloads]]`": schema.WorkloadConfig,
    "`[[policies]]`": schema.PolicyEntry,
    "`[[faults]]`": schema.FaultConfig,
    "`[[volumes]]`": schema.VolumeConfig,
    "`[[links]]`": schema.LinkConfig,
}


def _keys(model: type[BaseModel], prefix: str = "") -> set[str]:
    """Every key a user can write in this table, nested tables flattened as a.b."""
    out = set()
    for name, field in model.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel) and model is not schema.ScenarioModel:
            out.add(prefix + name)
            out |= _keys(ann, prefix + name + ".")
        else:
            out.add(prefix + name)
    return out


def _documented() -> dict[str, set[str]]:
    text = (ROOT / "docs" / "scenario-reference.md").read_text()
    found: dict[str, set[str]] = {}
    for block in re.split(r"^## ", text, flags=re.M)[1:]:
        title, _, body = block.partition("\n")
        rows = re.findall(r"^\| `([A-Za-z_.]+)`", body, flags=re.M)
        found[title.strip()] = set(rows)
    return found


def test_every_schema_key_is_documented_and_nothing_else():
    documented = _documented()
    for title, model in SECTIONS.items():
        assert title in documented, f"docs/scenario-reference.md has no section '## {title}'"
        expected = _keys(model)
        parents = {k.rsplit(".", 1)[0] for k in documented[title] if "." in k}
        missing = expected - documented[title] - parents
        assert not missing, f"{title}: keys in the schema but not in the docs: {sorted(missing)}"
        # nested tables may be documented either as a whole or key by key
        extra = {k for k in documented[title] - expected if k.split(".")[0] not in expected}
        assert not extra, f"{title}: keys in the docs that the schema does not have: {sorted(extra)}"
