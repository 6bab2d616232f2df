"""What happened, in words: sentences generated from a :class:`~pathsel.results.Result`.

A table says that latency round robin reached 13,516 IOPS; these sentences
say why and when: which paths a policy kept and dropped, how it compares
with the others, when a fault was noticed and how long the host took to
recover, what was retried or failed. Every number is read from the result
(its summary, events, faults and accounting), never from the scenario's
prose.

:func:`story` gives the sentences, :func:`text` wraps them for a terminal
(``pathsel simulate`` prints it under the table) and the report puts them at
its top.

The package, one idea a module: :mod:`.tell` (the story told, in order),
:mod:`.subject` (what the scenario is about), :mod:`.alike` (policies that
gave identical figures and why), :mod:`.paths` (naming a run's paths),
:mod:`.policy` (what the policy did: evaluations, ejections), :mod:`.faults`
(each fault and the recovery), :mod:`.stall` (the VMs a fault froze),
:mod:`.hosts` (per host in a cluster), :mod:`.queues` (the host's and the
array's queues), :mod:`.numa` (NUMA nodes), :mod:`.fabric` (slow drain),
:mod:`.words` (times, counts and lists as a person says them) and :mod:`.run`
(what the story reads of a result).
"""

from ..used import SHARE_USED
from .run import Run, Runs
from .tell import story, text
from .words import fmt_change, fmt_time

__all__ = ["story", "text", "fmt_time", "fmt_change", "SHARE_USED", "Run", "Runs"]
