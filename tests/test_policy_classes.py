"""Every built-in policy's Python class is defined where grep finds it: in its family's module, beside its PolicyDef.

``pathsel.policies.RoundRobin`` is the very class ``pathsel/policies/esxi.py`` binds, and its ``__module__`` and
``__qualname__`` name that place, so that pickle (Dask ships policies to its workers) finds it.
"""

from __future__ import annotations

import importlib
import pickle

import pytest

import pathsel.policies
from pathsel.policies import CompiledPolicy, build_policy
from pathsel.policies.registry import BUILTIN


def family_of(defn):
    """The module of pathsel.policies that defines ``defn`` (binds it to a name in its ``__all__``)."""
    found = []
    for name in ("esxi", "dm", "nvme", "nvme_adaptive", "mpio", "hpp", "aix", "hdlm", "p2c", "guard", "guard_v1", "oracle"):
        module = importlib.import_module(f"pathsel.policies.{name}")
        if any(getattr(module, n) is defn for n in module.__all__):
            found.append(module)
    assert len(found) == 1, f"{defn.name} is defined in {[m.__name__ for m in found]}"
    return found[0]


@pytest.mark.parametrize("defn", BUILTIN, ids=lambda d: d.name)
def test_the_class_lives_beside_its_policy_def(defn):
    family = family_of(defn)
    cls = getattr(family, defn.class_name)
    assert cls.definition is defn
    assert (cls.__module__, cls.__qualname__, cls.__name__) == (family.__name__, defn.class_name, defn.class_name)
    assert defn.class_name in family.__all__
    assert getattr(pathsel.policies, defn.class_name) is cls
    assert defn.class_name in pathsel.policies.__all__
    assert type(build_policy(defn.name)) is cls  # a spec builds the exported class


@pytest.mark.parametrize("defn", BUILTIN, ids=lambda d: d.name)
def test_the_class_and_its_instances_pickle(defn):
    cls = getattr(pathsel.policies, defn.class_name)
    assert pickle.loads(pickle.dumps(cls)) is cls
    policy = cls()
    assert type(pickle.loads(pickle.dumps(policy))) is cls


def test_every_exported_policy_class_is_a_built_in_one():
    exported = {
        n
        for n in pathsel.policies.__all__
        if isinstance(getattr(pathsel.policies, n), type) and issubclass(getattr(pathsel.policies, n), CompiledPolicy)
    }
    assert exported - {"CompiledPolicy"} == {d.class_name for d in BUILTIN}
