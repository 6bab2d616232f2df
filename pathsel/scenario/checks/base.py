"""What every section's checks of the second pass share: the scenario, the problems found so far in the order
found, and the names the checks look up (an array's, a host's; the path names each host gives).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import closest
from ..schema import ScenarioModel

__all__ = ["CrossCheck", "guess"]


@dataclass
class CrossCheck:
    """The second pass over one validated scenario, section by section. A check that depends on a failed one is
    skipped, so one defect is one problem (an unknown host does not also make its paths' names unknown)."""

    m: ScenarioModel
    problems: list[tuple[str, str]] = field(default_factory=list)
    arrays: list[str] = field(init=False)
    hosts: list[str] = field(init=False)
    # each host's path names, filled by the [[paths]] checks: the [[workloads]] checks ask which host has none
    names_by_host: dict[str, set[str]] = field(init=False)

    def __post_init__(self) -> None:
        self.arrays = [a.name for a in self.m.arrays]
        self.hosts = [h.name for h in self.m.hosts]
        self.names_by_host = {h: set() for h in self.hosts}

    def fail(self, place: str, problem: str) -> None:
        self.problems.append((place, problem))

    def unique(self, items: list[str], section: str) -> None:
        seen: set[str] = set()
        for i, name in enumerate(items):
            if name in seen:
                self.fail(f"{section}[{i}].name", f"duplicate name {name!r}")
            seen.add(name)

    def host_of(self, section: str, i: int, host: str | None) -> str | None:
        """The entry's host, or None when it is missing or unknown (reported)."""
        hosts, fail = self.hosts, self.fail
        if host is None:
            if len(hosts) > 1:
                fail(f"{section}[{i}].host", f"required when there is more than one host ({', '.join(hosts)})")
                return None
            return hosts[0]
        if host not in hosts:
            fail(f"{section}[{i}].host", f"no host named {host!r} (hosts: {', '.join(hosts)})")
            return None
        return host


def guess(word: str, candidates: list[str]) -> str:
    """The " (did you mean 'x'?)" when a misspelt name is close to one of ``candidates``, else ""."""
    guess = closest(word, candidates)
    return f" (did you mean {guess!r}?)" if guess and guess != word else ""
