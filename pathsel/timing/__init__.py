"""Timing: how long each step of an I/O takes and when I/Os arrive, as a scenario file gives them.

* :mod:`.distributions`: a delay as the file writes it (``"50us"``, ``{dist = "lognormal", ...}``), parsed;
* :mod:`.delay_kinds`: the kinds of delay (constant, exponential, ..., empirical), each drawn with the caller's
  random generator;
* :mod:`.delay_files`: empirical delays read from measurement files (ping, sockperf, fio, ...);
* :mod:`.arrivals`: offered load that changes (rate schedules, on/off bursts, traces replayed);
* :mod:`.textfile`: the files those name, read through the one capped reader.

Its own package because these are leaves: the scenario layer validates a file with them, the model compiles
them into a run, both engines draw from them, and they import none of those (only the other leaves: units,
limits, stats, the capped reader, measured files). In ``model/`` they sat above the scenario layer that uses them.
"""
