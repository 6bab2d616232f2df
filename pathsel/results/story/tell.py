"""The story told: an overview (what the scenario is about, the best policy, policies alike), then per policy its
sentences in order, a headline first; :func:`text` wraps them for a terminal."""

from __future__ import annotations

import math
import re
import textwrap

from ..cpu import cpu_sentences
from .alike import alike_sentences
from .fabric import fabric_sentences
from .faults import fault_sentences
from .hosts import HANDFUL, per_host
from .numa import numa_sentences
from .paths import Paths, on_paths, paths_used
from .policy import evaluations, other_events
from .queues import array_queue_sentence, queue_sentence
from .run import Run, Runs
from .subject import subject
from .words import and_list, fmt_change, in_ms, plural

__all__ = ["story", "text", "SAME"]

#: IOPS closer than this are "the same"
SAME = 0.02


def _headline(r: Run, others: list[Run], paths: Paths) -> str:
    lat = r.latency_us
    where = on_paths(r, paths_used(r), paths)
    s = f"{r.iops:,.0f} IOPS at {in_ms(lat['mean'], us=True)} mean and {in_ms(lat['p99'], us=True)} p99, {where}"
    if not r.ios:
        return "No I/O completed in the measured window."
    comparisons = []
    ranked = sorted(others, key=lambda o: o.iops)
    if len(ranked) > 3:  # the slowest, the fastest, and any it matched
        ranked = [ranked[0], ranked[-1], *(o for o in ranked[1:-1] if abs(_ratio(r, o)) < SAME)]
    for o in ranked:
        d = _ratio(r, o)
        if math.isnan(d):
            continue
        if abs(d) < SAME:
            comparisons.append(f"the same IOPS as {o.label} ({fmt_change(d)})")
        else:
            comparisons.append(f"{abs(d) * 100:.0f} % {'more' if d > 0 else 'fewer'} IOPS than {o.label}")
    if comparisons:
        s += "; " + and_list(comparisons)
    return s + "."


def _ratio(r: Run, o: Run) -> float:
    return r.iops / o.iops - 1 if o.iops > 0 else math.nan


def _expectation(r: Run) -> str | None:
    if r.expect_iops is None:
        return None
    err = r.expectation_error or 0.0
    where = f" ({r.expect_source})" if r.expect_source else ""
    verdict = "within" if abs(err) <= r.expect_tolerance else "OUTSIDE"
    return f"That is {fmt_change(err)} from the measured {r.expect_iops:,.0f} IOPS{where}, {verdict} its ±{r.expect_tolerance * 100:.0f} % tolerance."


def _accounting(r: Run) -> str | None:
    a = r.accounting
    parts = []
    if a["retried"]:
        parts.append(f"{plural(a['retried'], 'I/O')} {'was' if a['retried'] == 1 else 'were'} retried")
    if a["timed_out"]:
        parts.append(f"{plural(a['timed_out'], 'attempt')} timed out")
    if a.get("qfull"):
        parts.append(f"{plural(a['qfull'], 'command')} came back QUEUE FULL from a target port")
    if a["frames_lost"]:
        parts.append(f"{plural(a['frames_lost'], 'frame')} {'was' if a['frames_lost'] == 1 else 'were'} lost and resent")
    if a.get("refused"):
        offered = a["refused"] + a["issued"]
        parts.append(
            f"{plural(a['refused'], 'arrival')} of {offered:,} {'was' if a['refused'] == 1 else 'were'} refused "
            f"at a full iodepth ({a['refused'] / offered:.2%}, never issued)"
        )
    if not parts and not a["failed"]:
        return None
    failed = "none failed" if not a["failed"] else f"{plural(a['failed'], 'I/O')} failed"
    return f"Over the whole run {and_list(parts + [failed])}."


def _overview(result: Runs) -> list[str]:
    """What the scenario is about; with three policies or more, the best of them; policies that gave identical figures."""
    if not result.runs:
        return []
    return [subject(result.runs[0].model), *_best(result), *alike_sentences(list(result.runs))]


def _best(result: Runs) -> list[str]:
    runs = [r for r in result.runs if r.ios]
    if len(runs) < 3:  # two runs: each one's comparison with the other says it all
        return []
    best = max(runs, key=lambda r: r.iops)
    low = min(runs, key=lambda r: r.latency_us["p99"])
    ties = [r.label for r in runs if r is not best and abs(_ratio(r, best)) < SAME]
    s = f"Most IOPS: {best.label} ({best.iops:,.0f})"
    if ties:
        s += f", with {and_list(ties)} within {SAME * 100:.0f} %"
    s += f". Lowest p99 latency: {low.label} ({in_ms(low.latency_us['p99'], us=True)})."
    return [s]


def _capped(sentences: list[str], what: str) -> list[str]:
    """A sentence per host past a handful is a page: the first few, then how many more the table holds."""
    if len(sentences) <= HANDFUL + 1:
        return sentences
    return [*sentences[:HANDFUL], f"{len(sentences) - HANDFUL:,} more such notes on {what}: see the tables (--by host, --json)."]


def story(result: Runs) -> list[tuple[str | None, list[str]]]:
    """The sentences: ``(None, [overview])`` first (what the scenario is about; with three policies or more, the
    best; identical policies), then ``(label, [sentences])`` per run."""
    out: list[tuple[str | None, list[str]]] = []
    overview = _overview(result)
    if overview:
        out.append((None, overview))
    for r in result.runs:
        paths = Paths(r)
        others = [o for o in result.runs if o is not r]
        said = [_headline(r, others, paths)]
        said += [s for s in (per_host(r), array_queue_sentence(r)) if s]
        said += [s for s in (_expectation(r),) if s]
        said += other_events(r)
        # what the policy did and what happened to the paths, in time order
        said += [sentence for _, sentence in sorted(evaluations(r, paths) + fault_sentences(r, paths), key=lambda ts: ts[0])]
        said += [s for s in (queue_sentence(r),) if s]
        said += numa_sentences(r)
        if r.model.cpu is not None:
            said += _capped(cpu_sentences(r), "host CPUs")
        if r.model.fabric:
            said += _capped(fabric_sentences(r), "the fabric")
        said += [s for s in (_accounting(r),) if s]
        out.append((r.label, said))
    return out


# a number and its unit stay on one line
_UNIT = re.compile(r"(\d) (%|ms|s|IOPS|I/Os?)(?=[\s.,;:)]|$)")


def text(result: Runs, width: int = 100) -> str:
    """:func:`story` as wrapped plain text, a paragraph per policy."""
    lines = ["what happened:"]
    for label, sentences in story(result):
        body = _UNIT.sub("\\1\0\\2", " ".join(sentences))
        head = f"{label}: " if label else ""
        lines += textwrap.wrap(head + body, width=width, initial_indent="  ", subsequent_indent="    ", break_on_hyphens=False)
    return "\n".join(lines).replace("\0", " ") + "\n"
