"""Issue 35, scale: the shortcuts the 16,384-path cluster takes give exactly the numbers they replace.

``summaries_us`` works out every per-path histogram's percentiles in numpy passes; the table and the story
read paths' shares without the percentiles. Both must print what they printed before, to the byte.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pathsel.metrics import PATH_SUB_BITS, SUB_BITS, LogHistogram, summaries_us


def _hist(rng: np.random.Generator, n: int, sub_bits: int) -> LogHistogram:
    h = LogHistogram(sub_bits=sub_bits)
    # latencies over several decades, and some repeats (ties at the ranks)
    for x in rng.lognormal(mean=math.log(3e-4), sigma=rng.uniform(0.01, 2.0), size=n):
        h.add(float(x))
    for x in rng.choice([1e-9, 5e-5, 5e-5, 1e-3], size=n // 3):
        h.add(float(x))
    return h


def _same(a: dict[str, float], b: dict[str, float]) -> bool:
    return a.keys() == b.keys() and all((math.isnan(a[k]) and math.isnan(b[k])) or a[k] == b[k] for k in a)


@pytest.mark.parametrize("sub_bits", [SUB_BITS, PATH_SUB_BITS])
@pytest.mark.parametrize("chunk", [1, 3, 1024])
def test_summaries_equal_each_summary(sub_bits: int, chunk: int) -> None:
    rng = np.random.default_rng(35)
    hists = [_hist(rng, int(n), sub_bits) for n in rng.integers(0, 200, size=40)]
    hists += [LogHistogram(sub_bits=sub_bits), _hist(rng, 1, sub_bits), _hist(rng, 2, sub_bits)]  # empty, one, two
    got = summaries_us(hists, chunk=chunk)
    assert len(got) == len(hists)
    for h, s in zip(hists, got, strict=True):
        assert _same(s, h.summary_us()), (h.n, s, h.summary_us())
        if h.n:
            assert s["p99"] == h.percentile(99) * 1e6


def test_summaries_of_mixed_resolutions() -> None:
    rng = np.random.default_rng(4)
    hists = [_hist(rng, 50, SUB_BITS), _hist(rng, 50, PATH_SUB_BITS), _hist(rng, 7, SUB_BITS)]
    assert all(_same(s, h.summary_us()) for h, s in zip(hists, summaries_us(hists), strict=True))


def test_case_of_skips_parsing_only_files_without_a_validation_table(tmp_path) -> None:
    """``pathsel simulate`` asks case_of first: a plain scenario is not parsed twice, a case is still found,
    even under a key spelt with escapes."""
    from pathlib import Path

    from pathsel.studies.validate import case_of

    sims = Path(__file__).resolve().parent.parent / "sims"
    case = sims / "validation" / "mm1-open.toml"
    assert case_of(case) is not None
    assert case_of(sims / "port-queue-full.toml") is None
    escaped = tmp_path / "escaped.toml"
    text = case.read_text(encoding="utf-8").replace("[validation]", '["\\u0076alidation"]')
    escaped.write_text(text.replace("[[validation.", '[["\\u0076alidation".'), encoding="utf-8")
    assert "validation" not in escaped.read_text(encoding="utf-8")
    assert case_of(escaped) is not None


def _user_cluster(hosts: int, volumes: int, nexuses: int, seconds: float) -> str:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    try:
        import scale
    finally:
        sys.path.pop(0)
    return scale.user_cluster_toml(hosts, volumes, nexuses, seconds)


def test_the_user_cluster_loads_as_written() -> None:
    """benchmarks/scale.py's cluster is a scenario as a user writes it: every host, path, datastore, VM disk."""
    import pathsel

    sc = pathsel.loads_scenario(_user_cluster(3, 4, 8, 1.0), "user-3x4x8")
    m = sc.model
    assert (len(m.hosts), len(m.volumes), len(m.workloads)) == (3, 4, 12)
    assert len(sc.runs) == 1 and len(m.faults) == 2


def test_engines_agree_on_a_small_user_cluster() -> None:
    """The cluster's features together, with the arrays' FIFO long (16 slots for 192 I/Os) and the nexus's
    fault inside the run: the fast engine, whose grants now fetch the next in line's row, gives the
    reference engine's JSON and every I/O's trace."""
    import json

    import pathsel

    text = _user_cluster(2, 3, 8, 0.06).replace("concurrency = 512", "concurrency = 16")
    text = text.replace('at = "2s"', 'at = "20ms"').replace('at = "4s"', 'at = "40ms"').replace('detection = "1s"', 'detection = "5ms"')
    sc = pathsel.loads_scenario(text, "user-2x3x8")
    fast = pathsel.simulate(sc, engine="fast", trace=True)
    ref = pathsel.simulate(sc, engine="reference", trace=True)
    f, r = json.loads(fast.to_json()), json.loads(ref.to_json())
    f.pop("engine"), r.pop("engine")
    assert f == r
    assert fast.runs[0].metrics.trace == ref.runs[0].metrics.trace
    assert fast.runs[0].ios > 1000
