"""The scenario file's sections, one module each: its keys, their defaults and ranges, and the messages a bad value
of one key gets (the first pass, pydantic's).

``values`` holds the kinds of value keys of several sections take (durations, bandwidths, delays, fibre lengths,
loss, transports); ``hosts``, ``arrays``, ``paths``, ``fabric``, ``workloads``, ``faults`` and ``policies`` the
tables of those sections. The document that holds them is :mod:`pathsel.scenario.schema`; the checks across
sections, the second pass, are in :mod:`pathsel.scenario.checks`.
"""
