"""The ``[[workloads]]`` section: fio jobs, in fio's words: closed loops (``iodepth``, ``numjobs``), offered rates
(``rate_iops``, ``rate``, ``rate_schedule``, ``thinktime``), block size splits (``bs``) and traces replayed
(``read_iolog``). The checks across sections (a job's host and volume) are in
:mod:`pathsel.scenario.checks.workloads`.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, ValidationInfo, WithJsonSchema, field_validator, model_validator

from ...limits import MAX_BLOCK_SIZE, MAX_INT32, MAX_RATE_IOPS, MAX_RATE_STEPS, outstanding_problem
from ...timing.arrivals import BlockThink, Schedule, Trace, read_trace
from ...timing.distributions import delay_base_dir
from ...units import format_duration, parse_size
from .values import Bandwidth, Name, NonNegativeDuration, PositiveDuration, Strict

__all__ = ["RW_MODES", "RateStep", "WorkloadConfig"]

RW_MODES = ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw")


def _block_sizes(value: Any) -> tuple[tuple[int, float], ...]:
    """fio ``bs``: ``"32k"`` or a split ``"4k/50:64k/50"`` -> ((size, percent), ...).

    As in fio's bssplit, entries without a percentage share what is left of 100.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise ValueError(f'expected a block size such as "4k" or "4k/50:64k/50", got {value!r}')
    parts: list[tuple[int, float | None]] = []
    for item in value.split(":"):
        size_text, slash, pct_text = item.partition("/")
        size = parse_size(size_text)
        if size <= 0:
            raise ValueError("block size must be > 0")
        if size > MAX_BLOCK_SIZE:
            raise ValueError(f"block size {size_text.strip()!r} is more than the 1g (1 GiB) pathsel takes")
        if slash:
            try:
                pct = float(pct_text)
            except ValueError:
                pct = math.nan
            if not math.isfinite(pct):
                raise ValueError(f"{item!r}: percentage {pct_text!r} is not a number")
            if pct < 0:
                raise ValueError(f"{item!r}: percentage must be >= 0")
            parts.append((size, pct))
        else:
            parts.append((size, None))
    given = sum(p for _, p in parts if p is not None)
    if given > 100 + 1e-9:
        raise ValueError(f"bs split percentages add up to {given:g}, more than 100")
    blanks = [s for s, p in parts if p is None]
    share = (100.0 - given) / len(blanks) if blanks else 0.0
    out = tuple((s, share if p is None else p) for s, p in parts)
    if sum(p for _, p in out) <= 0:
        raise ValueError("bs split percentages must add up to more than 0")
    return out


BlockSizes = Annotated[tuple[tuple[int, float], ...], BeforeValidator(_block_sizes), WithJsonSchema({"type": "string"})]


def _derived_iops(rate: float, mean_bs: float, where: str = "") -> float:
    """I/Os per second of ``rate`` bytes per second at a mean block size of ``mean_bs`` bytes, within MAX_RATE_IOPS."""
    iops = rate / mean_bs
    if iops > MAX_RATE_IOPS:
        raise ValueError(
            f"{where}rate = {rate:,.6g} bytes per second over a mean block size of {mean_bs:,.6g} bytes is {iops:,.4g} IOPS "
            f"per job copy, more than the {MAX_RATE_IOPS:,.0f} (rate_iops's limit) pathsel takes"
        )
    return iops


class RateStep(Strict):
    """One step of a rate schedule: from ``at`` on, arrivals come at ``rate_iops`` (or ``rate``, bytes per second)."""

    at: NonNegativeDuration
    rate_iops: float | None = Field(None, ge=0, le=MAX_RATE_IOPS, strict=True, allow_inf_nan=False, description="I/Os per second from at on (0: off)")
    rate: Bandwidth | None = Field(None, description="bytes per second from at on: rate / mean bs I/Os per second")

    @model_validator(mode="after")
    def _one(self) -> RateStep:
        if (self.rate_iops is None) == (self.rate is None):
            raise ValueError("a rate_schedule step needs rate_iops or rate (bytes per second), one of them")
        return self


class WorkloadConfig(Strict):
    """A fio job: ``numjobs`` copies each keeping ``iodepth`` I/Os outstanding (closed loop), or offered at a rate."""

    name: Name = "job"
    host: str | None = None
    volume: str | None = None
    rw: Literal["read", "write", "randread", "randwrite", "rw", "readwrite", "randrw"] = "randread"
    rwmixread: int = Field(50, ge=0, le=100, strict=True, description="% reads in a mixed workload")
    rwmixwrite: int | None = Field(None, ge=0, le=100, strict=True, description="% writes in a mixed workload (fio); 100 - rwmixread when not given")
    bs: BlockSizes = ((4096, 100.0),)
    iodepth: int = Field(1, ge=1, le=65536, strict=True)
    numjobs: int = Field(1, ge=1, le=4096, strict=True)
    ramp_time: NonNegativeDuration = 0.0
    rate_iops: float | None = Field(
        None,
        gt=0,
        le=MAX_RATE_IOPS,
        strict=True,  # a number in quotes is refused with "drop the quotes", as for every other number
        allow_inf_nan=False,
        description="offered load, I/Os per second per job copy (open loop; iodepth caps those issued and not done)",
    )
    rate: Bandwidth | None = Field(None, description="offered load in bytes per second (fio's rate): rate_iops = rate / mean bs")
    rate_process: Literal["linear", "poisson"] = Field("linear", description="fio's rate_process: evenly spaced arrivals, or a Poisson process")
    # offered load that changes (issue 16): a schedule of rates, or fio's thinktime on/off
    rate_schedule: tuple[RateStep, ...] | None = Field(
        None,
        min_length=1,
        max_length=MAX_RATE_STEPS,
        description='steps [{at = "500ms", rate_iops = 80000}, ...]: the offered rate from each at on (rate_iops before the first)',
    )
    rate_schedule_period: PositiveDuration | None = Field(None, description="the schedule repeats every period (each step's at within it)")
    thinktime: PositiveDuration | None = Field(None, description="fio's thinktime for an open loop: arrivals pause this long after each burst")
    thinktime_blocks: int | None = Field(
        None, ge=1, le=MAX_INT32, strict=True, description="fio's thinktime_blocks: a burst is this many arrivals (default 1)"
    )
    thinktime_iotime: PositiveDuration | None = Field(
        None, description="fio's thinktime_iotime: a burst lasts this long (arrivals at rate_iops), then thinktime off"
    )
    numa_node: int = Field(0, ge=0, strict=True, description="the NUMA node the job's CPUs run on (fio's numa_cpu_nodes)")
    iodepth_full: Literal["wait", "refuse"] = Field(
        "wait", description="an open loop's arrival finding iodepth issued and not done: waits in the host, or is refused"
    )
    # a trace replayed (fio's read_iolog): arrival times, ops and sizes from a file
    iolog_format: Literal["auto", "fio", "blkparse", "csv"] = Field(
        "auto", description="read_iolog's format: fio iolog v2/v3, blkparse text, CSV time,op,offset,size"
    )
    replay_time_scale: float = Field(
        100.0,
        gt=0,
        le=1e6,
        strict=True,
        allow_inf_nan=False,
        description="fio's replay_time_scale, %: 200 replays twice as fast, 50 at half the trace's rate",
    )
    replay_no_stall: bool = Field(False, strict=True, description="fio's replay_no_stall: ignore the timestamps, issue as fast as iodepth lets")
    read_iolog: Annotated[Any, WithJsonSchema({"type": "string"})] = Field(
        None, description="a trace to replay: its arrival times, ops and sizes (relative to the scenario file)"
    )

    @field_validator("read_iolog", mode="before")
    @classmethod
    def _read_iolog(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None or isinstance(value, Trace):
            return value
        if not isinstance(value, str):
            raise ValueError(f'must be a file name such as "data/trace.log", got {value!r}')
        if "iolog_format" not in info.data or "replay_time_scale" not in info.data or "replay_no_stall" not in info.data:
            return None  # a bad sibling key is reported on its own
        return read_trace(value, info.data["iolog_format"], info.data["replay_time_scale"], info.data["replay_no_stall"], delay_base_dir.get())

    @model_validator(mode="after")
    def _rate(self) -> WorkloadConfig:
        if self.rate is not None and self.rate_iops is not None:
            raise ValueError("give rate_iops or rate (bytes per second), not both")
        if self.rate is not None:
            # the limit holds for the rate the engine runs, not for the figure the user typed
            object.__setattr__(self, "rate_iops", _derived_iops(self.rate, self._mean_bs()))
        if (
            "rate_process" in self.model_fields_set
            and self.rate_iops is None
            and self.rate_schedule is None
            and "read_iolog" not in self.model_fields_set
        ):  # a trace: _arrivals says what to drop
            raise ValueError("rate_process needs rate_iops, rate or rate_schedule (without them the job is a closed loop)")
        return self

    @model_validator(mode="after")
    def _arrivals(self) -> WorkloadConfig:
        given = self.model_fields_set
        replay = [k for k in ("iolog_format", "replay_time_scale", "replay_no_stall") if k in given]
        if "read_iolog" in given:
            clash = [
                k for k in ("rate_iops", "rate", "rate_process", "rate_schedule", "thinktime", "rw", "rwmixread", "rwmixwrite", "bs") if k in given
            ]
            if clash:
                raise ValueError(f"read_iolog gives each I/O's arrival time, op and size: drop {', '.join(clash)}")
        elif replay:
            raise ValueError(f"{replay[0]} needs read_iolog (a trace to replay)")
        if "iodepth_full" in given and self.rate_iops is None and self.rate_schedule is None and "read_iolog" not in given:
            raise ValueError(
                "iodepth_full applies to an open loop (rate_iops, rate, rate_schedule or read_iolog): a closed loop never has an arrival to refuse"
            )
        if self.rate_schedule_period is not None and self.rate_schedule is None:
            raise ValueError("rate_schedule_period needs rate_schedule")
        think = [k for k in ("thinktime_blocks", "thinktime_iotime") if k in given]
        if self.thinktime is None and think:
            raise ValueError(f"{think[0]} needs thinktime (the pause after each burst)")
        if self.thinktime is not None:
            if self.rate_iops is None or self.rate_schedule is not None:
                raise ValueError(
                    "thinktime pauses an open loop's arrivals: give rate_iops or rate, and no rate_schedule "
                    "(pathsel does not model thinktime in a closed loop)"
                )
            if len(think) == 2:
                raise ValueError("give thinktime_blocks or thinktime_iotime, not both")
        if self.rate_schedule is not None:
            steps = self.rate_schedule
            ats = [st.at for st in steps]
            if any(b <= a for a, b in zip(ats, ats[1:])):
                raise ValueError("rate_schedule: each step's at must come after the one before")
            if self.rate_iops is None and ats[0] != 0:
                raise ValueError(
                    f'rate_schedule: the first step is at {format_duration(ats[0])}: start it at "0s", or '
                    "give rate_iops (or rate) for the time before it"
                )
            period = self.rate_schedule_period
            if period is not None and ats[-1] >= period:
                raise ValueError(f"rate_schedule: a step at {format_duration(ats[-1])} is not within rate_schedule_period {format_duration(period)}")
            try:
                self.arrival_spec()
            except ValueError as e:
                raise ValueError(f"rate_schedule: {e}") from None
        return self

    def _mean_bs(self) -> float:
        return sum(s * w for s, w in self.bs) / sum(w for _, w in self.bs)

    def arrival_spec(self) -> Any:
        """How this job's arrivals come, when not at one steady rate: a Schedule, a BlockThink, a Trace, or None."""
        if isinstance(self.read_iolog, Trace):
            return self.read_iolog
        poisson = self.rate_process == "poisson"
        if self.rate_schedule is not None:
            starts, rates = [], []
            if self.rate_iops is not None and self.rate_schedule[0].at > 0:
                starts.append(0.0)
                rates.append(self.rate_iops)
            for st in self.rate_schedule:
                starts.append(st.at)
                if st.rate_iops is not None:
                    rates.append(st.rate_iops)
                else:  # RateStep._one: rate is given when rate_iops is not
                    assert st.rate is not None
                    rates.append(_derived_iops(st.rate, self._mean_bs(), f"the step at {format_duration(st.at)}: "))
            return Schedule(tuple(starts), tuple(rates), self.rate_schedule_period or 0.0, poisson)
        if self.thinktime is not None and self.rate_iops is not None:
            if self.thinktime_iotime is not None:
                return Schedule((0.0, self.thinktime_iotime), (self.rate_iops, 0.0), self.thinktime_iotime + self.thinktime, poisson)
            return BlockThink(self.rate_iops, self.thinktime_blocks or 1, self.thinktime, poisson)
        return None

    @model_validator(mode="after")
    def _mix(self) -> WorkloadConfig:
        """fio's two names for one split: either gives the other; both must agree."""
        given_read = "rwmixread" in self.model_fields_set
        if self.rwmixwrite is not None and given_read and self.rwmixread + self.rwmixwrite != 100:
            # fio lets the later of the two win; a scenario's keys are not read in order, so say so
            raise ValueError(
                f"rwmixread = {self.rwmixread} and rwmixwrite = {self.rwmixwrite} add up to "
                f"{self.rwmixread + self.rwmixwrite}, not 100: give one of them, or two that add up to 100"
            )
        # frozen model: set the derived one directly, so either name reads the split
        if self.rwmixwrite is not None and not given_read:
            object.__setattr__(self, "rwmixread", 100 - self.rwmixwrite)
        elif self.rwmixwrite is None:
            object.__setattr__(self, "rwmixwrite", 100 - self.rwmixread)
        return self

    @model_validator(mode="after")
    def _outstanding(self) -> WorkloadConfig:
        problem = outstanding_problem(self.numjobs, self.iodepth)
        if problem:
            raise ValueError(problem)
        return self

    @property
    def read_fraction(self) -> float:
        if self.rw in ("read", "randread"):
            return 1.0
        if self.rw in ("write", "randwrite"):
            return 0.0
        return self.rwmixread / 100.0
