"""The set-up, drawn: hosts, adapters, the fabric, target ports by controller, arrays and replication, and its key figures.

:func:`~.figure.topology` draws the scenario as a plotly figure, left to right: hosts, their adapters (initiator
ports), the fabric's switches (a box each, ISLs as bands between them, every link with ends labelled with the share
of the run it was busy and held, as the report's wire table gives them), the target ports boxed by the array's
controller, and the arrays, with the replication link between arrays; one line per I-T nexus over its route. A
line's colour is its ALUA state at the start of the run, striped where it is AO for some LUNs and not for others
(issue 48); its width is the share of I/Os a policy sent down it (buttons switch the policy); one that carried
nothing is thin and dotted. From ``COMPACT_HOSTS`` (32) hosts the drawing is compact: hosts wired alike are one
node, a controller's target ports one, the fabric still drawn.

:func:`~.key_table.key_figures` lists what a reader needs to know to judge the numbers.

The modules, in the order the drawing is made: :mod:`.nexus` (the I-T nexuses and their routes), :mod:`.compact`
(the lines drawn: a nexus each, or hosts wired alike as one), :mod:`.layout` (where everything goes),
:mod:`.style` (colours, widths, words), :mod:`.arrays` (wiring, target ports by controller, arrays, replication),
:mod:`.fabric` (switches, ISLs, link markers), :mod:`.paths` (the lines, their stripes and hover), :mod:`.figure`
(the figure, its legend and policy buttons), :mod:`.key_table` (the key figures).
"""

from .compact import COMPACT_HOSTS
from .figure import topology
from .key_table import key_figures
from .nexus import Nexus, nexuses
from .style import ALUA_COLORS

__all__ = ["topology", "key_figures", "nexuses", "Nexus", "ALUA_COLORS", "COMPACT_HOSTS"]
