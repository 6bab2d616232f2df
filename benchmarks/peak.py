"""A probe's own peak memory, the one reading engines.py and scale.py paste into the processes they start.

Linux's ru_maxrss of a child also counts its parent's RSS at the fork (a child of a 600 MiB process reads
613 MiB while its own peak, VmHWM, is 13 MiB): engines.py grows past 1 GB once it holds two engines, and a
probe started then read 1,385 MiB. Its own module so that neither script imports the other for it.
"""

PEAK = """
    def status_mib(key):  # None where there is no /proc (not Linux)
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith(key + ":"):
                        return int(line.split()[1]) / 1024
        except OSError:
            return None

    def peak_mib():
        import resource
        return status_mib("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""
