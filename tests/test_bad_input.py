"""Bad input gets one located message (``file: place: problem``), never a traceback.

Each file in ``tests/bad_inputs/`` is the same small valid scenario with exactly
one defect (named in its first line). The table says where the loader must
point and what it must say; every row is checked through the API and the CLI.
"""

from __future__ import annotations

import copy
import datetime
import json
import subprocess
import sys
import tomllib

import pytest

import pathsel
from pathsel.cli import main
from pathsel.scenario.load import scenario_from_data

from .conftest import ROOT

BAD = ROOT / "tests" / "bad_inputs"

# (file in tests/bad_inputs, expected place, fragment of the expected problem)
CASES = [
    ("unknown_top_key.toml", "colour", "unknown key 'colour'"),
    ("unknown_path_key.toml", "paths[1].latnecy", "unknown key 'latnecy'"),
    ("iodepth_string.toml", "workloads[0].iodepth", "must be a valid integer, got 'many'"),
    ("latency_no_unit.toml", "paths[1].one_way_latency", "50 has no unit"),
    ("latency_bare_nan.toml", "paths[1].one_way_latency", 'nan: must be a finite duration such as "50us"'),
    ("latency_wrong_unit.toml", "paths[1].one_way_latency", "unknown time unit 'kb'"),
    ("latency_zero.toml", "paths[1].one_way_latency", "must be > 0"),
    ("latency_negative.toml", "paths[1].one_way_latency", "must be > 0"),
    (
        "unknown_dist.toml",
        "paths[1].one_way_latency",
        "dist must be one of constant, empirical, exponential, lognormal, mixture, normal, uniform, got 'gamma'",
    ),
    ("lognormal_p99_below_median.toml", "paths[1].one_way_latency", "lognormal: p99 must be above the median (median 1.2ms, p99 900us)"),
    ("normal_negative_stddev.toml", "paths[1].one_way_latency", "normal: stddev must be > 0, got -20us"),
    ("mixture_weight_zero.toml", "paths[1].one_way_latency", "mixture components[1]: weight must be > 0, got 0"),
    (
        "empirical_missing_file.toml",
        "paths[1].one_way_latency",
        f"empirical: no such file 'no-such-capture.txt' (looked for {BAD / 'no-such-capture.txt'})",
    ),
    (
        "empirical_unknown_format.toml",
        "paths[1].one_way_latency",
        "empirical: format must be one of auto, plain, ping, sockperf, latte, fio, got 'csv'",
    ),
    ("bandwidth_no_unit.toml", "paths[1].bandwidth", "'16' has no unit"),
    # issue 13: units as people write them, and their limits
    (
        "bandwidth_bytes_without_rate.toml",
        "paths[1].bandwidth",
        '\'32GB\' is an amount of data, not a rate: write "32GB/s" for bytes per second, or "32Gb" for bits per second',
    ),
    ("bandwidth_unknown_unit.toml", "paths[1].bandwidth", "'10Gbq': unknown link speed unit 'Gbq' (bits: Gbit, Gb, Gbps"),
    ("duration_too_long.toml", "duration", "'1e12s' is more than the 1e6s (11.6 days) pathsel allows: its clock counts seconds in float64"),
    ("duration_infinite.toml", "duration", "'inf s': must be finite"),
    ("service_time_negative.toml", "arrays[0].service_time", "must be >= 0"),
    # did you mean ...?
    ("required_key_misspelt.toml", "paths[1].one_way_latncy", "unknown key 'one_way_latncy' (did you mean 'one_way_latency'?)"),
    ("top_key_misspelt.toml", "polices", "unknown key 'polices' (did you mean 'policies'?)"),
    ("policy_name_misspelt.toml", "policies[0].spec", "unknown policy 'latncy' (did you mean 'latency'?)"),
    ("delay_key_misspelt.toml", "paths[1].one_way_latency", "unknown key 'meen' for an exponential distribution (did you mean 'mean'?)"),
    # issue 5: links, loss, detection, volumes and the fault timeline
    ("fault_negative_time.toml", "faults[0].at", "must be >= 0"),
    ("fault_unknown_link.toml", "faults[0].link", "no link named 'isl-9' (links: replication)"),
    ("path_unknown_link.toml", "paths[1].links[0]", "no link named 'hba2' (links: hba1)"),
    ("fault_latency_no_add.toml", "faults[0].add", "a latency step needs add"),
    ("fault_loss_ppm_over_million.toml", "faults[0].ppm", "must be less than or equal to 1000000, got 2000000"),
    ("fault_array_unknown.toml", "faults[0].array", "no array named 'middle' (arrays: local, remote)"),
    ("fault_path_and_link.toml", "faults[0].path", "loss needs exactly one of path or link"),
    ("workload_unknown_volume.toml", "workloads[0].volume", "no volume named 'logs' (volumes: db)"),
    ("host_detection_negative.toml", "hosts[0].detection", "must be >= 0"),
    ("loss_recovery_zero.toml", "paths[1].loss_recovery", "must be > 0"),
    ("path_unknown_array.toml", "paths[1].array", "no array named 'remot' (arrays: local, remote)"),
    ("workload_unknown_host.toml", "workloads[0].host", "no host named 'esxi02' (hosts: esxi01)"),
    ("empty_hosts.toml", "hosts", "must not be empty"),
    ("host_preferred_not_in_pair.toml", "hosts[0].preferred_array", "'middle' is not in the replication pair (local, remote)"),
    ("policy_preferred_not_in_pair.toml", "policies[0].preferred_array", "'middle' is not in the replication pair (local, remote)"),
    ("policy_spec_preferred_not_in_pair.toml", "policies[0].spec", "'middle' is not in the replication pair (local, remote)"),
    ("replication_unknown_array.toml", "replication.arrays[1]", "no array named 'remot' (arrays: local, remote)"),
    ("replication_same_array.toml", "replication.arrays", "names 'local' twice"),
    ("latency_sampling_cycles_8.toml", "policies[0].spec", "num_sampling_cycles must be in 16..2147483647, got 8"),
    ("latency_eval_time_1000.toml", "policies[0].spec", "latency_eval_time must be in 30000..2147483647, got 1000"),
    ("latency_cutoff_half.toml", "policies[0].spec", "cutoff must be in 1..100, got 0.5"),
    ("latency_variant_unknown.toml", "policies[0].spec", "variant must be one of min-set, score, lqd, got 'lq'"),
    ("rr_iops_0.toml", "policies[0].spec", "iops must be in 1..2147483647, got 0"),
    ("use_ano_2.toml", "policies[0].use_ano", "use_ano must be in 0..1, got 2"),
    ("unknown_policy.toml", "policies[0].spec", "unknown policy 'bogus' (known: fixed, mru, rr, latency, p2c-ewma, guard, oracle; "),
    ("unknown_param_in_spec.toml", "policies[0].spec", "rr has no parameter 'iopz' (did you mean 'iops'? parameters: type, iops, bytes, use_ano)"),
    ("unknown_param_key.toml", "policies[0].iopz", "rr has no parameter 'iopz'"),
    ("policy_not_a_table.toml", "policies[0]", 'must be a spec string such as "rr:iops=1" or a table with a spec key, got 5'),
    ("fixed_preferred_unknown.toml", "policies[0].spec", "preferred path 'p9' is not a path of this scenario"),
    ("hpp_fixed_preferred_unknown.toml", "policies[0].spec", "hpp:fixed: preferred path 'p9' is not a path of this scenario"),
    ("invalid_toml.toml", "line 27, column 12", "not valid TOML"),
    ("duplicate_path_names.toml", "paths[1].name", "duplicate path name 'p0' on host 'esxi01'"),
    ("count_without_i.toml", "paths[0].name", "count = 3 needs {i} in the name"),
    ("bs_split_over_100.toml", "workloads[0].bs", "bs split percentages add up to 120, more than 100"),
    ("rwmixread_150.toml", "workloads[0].rwmixread", "less than or equal to 100, got 150"),
    ("rwmixwrite_101.toml", "workloads[0].rwmixwrite", "less than or equal to 100, got 101"),
    (
        "rwmix_read_and_write_disagree.toml",
        "workloads[0]",
        "rwmixread = 70 and rwmixwrite = 40 add up to 110, not 100: give one of them, or two that add up to 100",
    ),
    ("rw_unknown.toml", "workloads[0].rw", "got 'randomread' (did you mean 'randread'?)"),
    ("ramp_time_negative.toml", "workloads[0].ramp_time", "must be >= 0"),
    ("seed_negative.toml", "seed", "greater than or equal to 0, got -1"),
    ("alua_fault_no_state.toml", "faults[0].state", "an alua change needs the new state"),
    ("fault_unknown_path.toml", "faults[0].path", "no path named 'p9' on host 'esxi01'"),
    ("missing_paths.toml", "paths", "required section is missing (add at least one [[paths]] table)"),
    # issue 18: measurements in, shipped defaults
    (
        "empirical_fio_cut_short.toml",
        "paths[1].one_way_latency",
        "empirical: ../data/import/bad/fio-cut-short.json: line 104, column 26: the JSON ends early (cut short?)",
    ),
    ("empirical_fio_wrong_op.toml", "paths[1].one_way_latency", "jobs[0].read: no read I/Os (total_ios = 0): the file has write"),
    ("preset_unknown.toml", "policies[0].spec", "unknown preset 'dm-netap-ontap' (did you mean preset:dm-netapp-ontap?"),
    ("not_utf8.toml", "line 2", "not text (byte 0xe9)"),
    ("does_not_exist.toml", "", "no such file"),
    (".", "", "is a directory, not a scenario file"),  # tests/bad_inputs itself
    # issue 15: non-finite or huge numbers, after unit scaling, wherever a number is read
    ("latency_1e308min.toml", "paths[1].one_way_latency", "'1e308min' is more than the 1e6s (11.6 days) pathsel allows"),
    ("latency_inf.toml", "paths[1].one_way_latency", "'inf us': must be finite"),
    ("latency_nan.toml", "paths[1].one_way_latency", "'nan ms': must be finite"),
    ("service_time_1e308min.toml", "arrays[0].service_time", "'1e308min' is more than the 1e6s (11.6 days) pathsel allows"),
    ("service_time_read_inf.toml", "arrays[0].service_time.read", "'inf s': must be finite"),
    ("fault_add_1e308min.toml", "faults[0].add", "'1e308min' is more than the 1e6s (11.6 days) pathsel allows"),
    ("fault_at_1e308s.toml", "faults[0].at", "'1e308s' is more than the 1e6s (11.6 days) pathsel allows"),
    ("fault_duration_nan.toml", "faults[0].duration", "'nan s': must be finite"),
    ("distance_km_inf.toml", "paths[1].distance_km", "must be a finite number, got inf"),
    ("distance_km_nan.toml", "paths[1].distance_km", "must be a finite number, got nan"),
    (
        "distance_km_moon.toml",
        "paths[1].distance_km",
        "384400 km is more than once round the Earth (40075 km), the longest fibre pathsel takes",
    ),
    ("loss_ppm_nan.toml", "paths[1].loss_ppm", "must be a finite number, got nan"),
    ("replication_distance_inf.toml", "replication.distance_km", "must be a finite number, got inf"),
    (
        "replication_latency_1e308s.toml",
        "replication.one_way_latency",
        "'1e308s' is more than the 1e6s (11.6 days) pathsel allows",
    ),
    ("expect_iops_inf.toml", "policies[0].expect.iops", "must be a finite number, got inf"),
    ("expect_tolerance_nan.toml", "policies[0].expect.tolerance", "must be a finite number, got nan"),
    ("duration_1e308s.toml", "duration", "'1e308s' is more than the 1e6s (11.6 days) pathsel allows"),
    ("ramp_time_1e308s.toml", "workloads[0].ramp_time", "'1e308s' is more than the 1e6s (11.6 days) pathsel allows"),
    (
        "exponential_mean_1e308s.toml",
        "paths[1].one_way_latency",
        "'1e308s' is more than the 1e6s (11.6 days) pathsel allows",
    ),
    (
        "lognormal_mean_overflows.toml",
        "paths[1].one_way_latency",
        "lognormal: its mean is 4.12059e+10s, more than the 1e6s pathsel allows",
    ),
    ("normal_mean_inf.toml", "paths[1].one_way_latency", "'inf s': must be finite"),
    (
        "uniform_high_1e308min.toml",
        "paths[1].one_way_latency",
        "'1e308min' is more than the 1e6s (11.6 days) pathsel allows",
    ),
    ("mixture_component_inf.toml", "paths[1].one_way_latency", "mixture components[1]: 'inf s': must be finite"),
    (
        "mixture_weight_inf.toml",
        "paths[1].one_way_latency",
        "mixture components[0]: weight must be a finite number, got inf",
    ),
    (
        "bandwidth_1e308gbit.toml",
        "paths[1].bandwidth",
        "'1e308Gb' is too large a link speed (it overflows once converted to bytes per second)",
    ),
    ("bandwidth_inf.toml", "paths[1].bandwidth", "'inf Gb': must be finite"),
    (
        "bandwidth_1e-300.toml",
        "paths[1].bandwidth",
        "'1e-300b' is slower than the 1kbit/s (125 bytes per second) pathsel takes: one 4 KiB frame would take more than half a minute",
    ),
    ("detection_1e308s.toml", "hosts[0].detection", "'1e308s' is more than the 1e6s (11.6 days) pathsel allows"),
    ("io_timeout_inf.toml", "hosts[0].io_timeout", "'inf s': must be finite"),
    ("loss_recovery_1e308s.toml", "paths[1].loss_recovery", "'1e308s' is more than the 1e6s (11.6 days) pathsel allows"),
    ("policy_param_inf.toml", "policies[0].spec", "iops must be an integer, got 'inf'"),
    ("policy_key_float_inf.toml", "policies[0].iops", "iops must be an integer, got inf"),
    ("policy_param_nan_key.toml", "policies[0].decay", "decay must be in 0.001..86400, got nan"),
    ("policy_param_nan_spec.toml", "policies[0].spec", "decay must be in 0.001..86400, got nan"),
    ("iodepth_float.toml", "workloads[0].iodepth", "must be a valid integer, got 1e+300"),
    ("weight_huge.toml", "paths[1].weight", "must be less than or equal to 2147483647, got 1000000000000000000000000000000"),
    (
        "concurrency_2_70.toml",
        "arrays[0].concurrency",
        "must be less than or equal to 2147483647, got 1180591620717411303424",
    ),
    # issue 15: one thing said twice is refused, not the last taken
    (
        "rr_iops_twice.toml",
        "policies[0].spec",
        "'iops' is given twice in policy spec 'rr:iops=1,iops=2': give each parameter once",
    ),
    (
        "spec_and_key_iops.toml",
        "policies[0].iops",
        "'iops' is given twice: in the spec ('rr:iops=5') and as a key beside it; give it once",
    ),
    (
        "sampling_cycles_both_spellings.toml",
        "policies[0].num-sampling-cycles",
        "'num-sampling-cycles' is given twice (as 'num_sampling_cycles' and 'num-sampling-cycles'): hyphens and underscores are the same; give it once",
    ),
    (
        "sampling_cycles_both_in_spec.toml",
        "policies[0].spec",
        "'num-sampling-cycles' is given twice in policy spec 'latency:num_sampling_cycles=16,num-sampling-cycles=32' (as 'num_sampling_cycles'): give each parameter once",
    ),
    (
        "label_twice_in_spec.toml",
        "policies[0].spec",
        "'label' is given twice in policy spec 'rr:iops=1,label=x,label=y': give each parameter once",
    ),
    (
        "label_in_spec_and_key.toml",
        "policies[0].label",
        "'label' is given twice: in the spec ('rr:iops=1,label=x') and as a key beside it; give it once",
    ),
    (
        "preferred_array_twice.toml",
        "policies[0].preferred_array",
        "'preferred_array' is given twice: in the spec ('rr:preferred_array=local') and as a key beside it; give it once",
    ),
    (
        "two_policies_same_label.toml",
        "policies[1].label",
        "is labelled 'mine', as policies[0] is: two rows of one name; give one its own label (label = \"NAME\") or drop it",
    ),
    (
        "two_policies_same_spec.toml",
        "policies[1].spec",
        "is labelled 'rr:iops=1', as policies[0] is: two rows of one name; give one its own label (label = \"NAME\") or drop it",
    ),
    # issue 15: TOML's true is not 1
    (
        "policy_key_true.toml",
        "policies[0].iops",
        "iops = true: a boolean is not a policy parameter value (write a number, iops = 1, or a word)",
    ),
    (
        "use_ano_false.toml",
        "policies[0].use_ano",
        "use_ano = false: a boolean is not a policy parameter value (write a number, use_ano = 0, or a word)",
    ),
    ("iodepth_true.toml", "workloads[0].iodepth", "must be a whole number, got true (a boolean is not a number)"),
    ("count_true.toml", "paths[1].count", "must be a whole number, got true (a boolean is not a number)"),
    ("distance_km_true.toml", "paths[1].distance_km", "must be a number, got true (a boolean is not a number)"),
    ("loss_ppm_true.toml", "paths[1].loss_ppm", "must be a number, got true (a boolean is not a number)"),
    ("seed_true.toml", "seed", "must be a whole number, got true (a boolean is not a number)"),
    ("expect_iops_true.toml", "policies[0].expect.iops", "must be a number, got true (a boolean is not a number)"),
    ("rwmixread_true.toml", "workloads[0].rwmixread", "must be a whole number, got true (a boolean is not a number)"),
    ("concurrency_true.toml", "arrays[0].concurrency", "must be a whole number, got true (a boolean is not a number)"),
    # issue 15: sizes that would exhaust memory or run for ever, refused with the figure
    (
        "interval_1ns.toml",
        "interval",
        "interval 1ns over a 10s run gives 10,000,000,000 bins per path; with 2 paths the time series takes 720.0 GB, more than the 0.4 GB pathsel keeps: write an interval of 2us or more",
    ),
    ("interval_half_ns.toml", "interval", "'0.5ns' is shorter than 1ns, the resolution of pathsel's clock"),
    (
        "outstanding_too_many.toml",
        "workloads[0]",
        "4,096 jobs x iodepth 65,536 = 268,435,456 outstanding I/Os, more than the 1,048,576 pathsel simulates in one run",
    ),
    (
        "outstanding_over_workloads.toml",
        "workloads",
        "the workloads keep 1,126,400 I/Os outstanding together (1,000 x 1,024 + 100 x 1,024, numjobs x iodepth), more than the 1,048,576 pathsel simulates in one run",
    ),
    ("count_1e9.toml", "paths[0].count", "count = 1,000,000,000 is more than the 65,536 paths pathsel simulates in one run"),
    (
        "paths_over_volumes.toml",
        "paths",
        "66,066 paths (count over every [[paths]] table, once per volume on its array) is more than the 65,536 pathsel simulates in one run",
    ),
    (
        "paths_per_device_1501.toml",
        "paths",
        "host 'esxi01' sees its volume over 1,501 paths, more than the 1,024 paths per device pathsel simulates (the "
        "engine's memory grows with their square; ESXi and Windows stop at 32)",
    ),
    ("bs_9e18g.toml", "workloads[0].bs", "block size '9e18g' is more than the 1g (1 GiB) pathsel takes"),
    ("bs_1e400g.toml", "workloads[0].bs", "'1e400g': must be finite"),
    ("bs_2g.toml", "workloads[0].bs", "block size '2g' is more than the 1g (1 GiB) pathsel takes"),
    (
        "io_timeout_1ns.toml",
        "hosts[0].io_timeout",
        "'1ns' is shorter than the 10us pathsel takes: an attempt slower than it is aborted and retried, so with loss or a slow path the host would retry each I/O more than 100,000 times per simulated second (SCSI and NVMe hosts wait 30s)",
    ),
    (
        "apd_timeout_1ns.toml",
        "hosts[0].apd_timeout",
        "'1ns' is shorter than the 10us pathsel takes: with no usable path each I/O fails after it and its job issues the next at once, so the host would fail more than 100,000 I/Os per simulated second (ESXi waits 140s; for dm's no_path_retry fail write 1ms)",
    ),
    # issue 15: files without an end, nesting without a bottom, files without a scenario
    (
        "empirical_dev_zero.toml",
        "paths[1].one_way_latency",
        "empirical: '/dev/zero' is not text (line 1, a NUL byte: a binary file?)",
    ),
    (
        "empirical_huge_sample.toml",
        "paths[1].one_way_latency",
        "empirical: 'huge-sample.txt' line 2: '1e308s' is more than the 1e6s (11.6 days) pathsel allows",
    ),
    ("nested_5000.toml", "line 2", "arrays or inline tables nested too deep to read (hundreds of levels)"),
    ("nested_500.toml", "line 2", "arrays or inline tables nested too deep to read (hundreds of levels)"),
    ("nested_inline_5000.toml", "line 2", "arrays or inline tables nested too deep to read (hundreds of levels)"),
    (
        "only_comments.toml",
        "",
        "holds no settings (only comments and blank lines): a scenario needs at least [[arrays]], [[paths]] and [[workloads]] (pathsel schema lists every key)",
    ),
    # issue 16: the arrays' target ports (QUEUE FULL), ESXi's throttling, the adapter's queue depth
    ("port_queue_depth_zero.toml", "arrays[0].port_queue_depth", "must be greater than or equal to 1, got 0"),
    ("port_queue_depth_string.toml", "arrays[0].port_queue_depth", "must be a valid integer, got '2048'"),
    # issue 16: the array's read cache
    ("read_hit_ratio_above_one.toml", "arrays[0].read_hit_ratio", "must be less than or equal to 1, got 1.5"),
    ("read_hit_ratio_string.toml", "arrays[0].read_hit_ratio", "must be a valid number, got '50%'"),
    ("read_hit_service_time_negative.toml", "arrays[0].read_hit_service_time", "must be >= 0"),
    ("read_hit_service_time_no_unit.toml", "arrays[0].read_hit_service_time", '20 has no unit (write it like "20us", "20ms" or "20s")'),
    ("target_port_empty.toml", "paths[0].target_port", "must not be empty"),
    (
        "qfull_sample_size_without_queue_depth.toml",
        "hosts[0]",
        "qfull_sample_size needs queue_depth: throttling halves the device queue depth, so the host must have one "
        "(ESXi's DQLEN, e.g. queue_depth = 64)",
    ),
    (
        "qfull_threshold_above_sample_size.toml",
        "hosts[0]",
        "qfull_threshold (8) must be at most qfull_sample_size (4), as KB 1008113 asks",
    ),
    ("qfull_sample_size_65.toml", "hosts[0].qfull_sample_size", "must be less than or equal to 64, got 65"),
    ("qfull_threshold_zero.toml", "hosts[0].qfull_threshold", "must be greater than or equal to 1, got 0"),
    ("qfull_retry_delay_negative.toml", "hosts[0].qfull_retry_delay", "must be >= 0"),
    ("adapter_queue_depth_zero.toml", "hosts[0].adapter_queue_depth", "must be greater than or equal to 1, got 0"),
    # issue 32: Disk.SchedNumReqOutstanding (DSNRO)
    (
        "dsnro_above_queue_depth.toml",
        "hosts[0]",
        "sched_num_req_outstanding (64) must be at most queue_depth (32): a DSNRO above the device's queue depth would never bind",
    ),
    ("dsnro_without_queue_depth.toml", "hosts[0]", "sched_num_req_outstanding needs queue_depth"),
    ("dsnro_257.toml", "hosts[0].sched_num_req_outstanding", "must be less than or equal to 256, got 257"),
    ("dsnro_zero.toml", "hosts[0].sched_num_req_outstanding", "must be greater than or equal to 1, got 0"),
    ("dsnro_scope_unknown.toml", "hosts[0].dsnro_scope", "must be 'all_vms' or 'per_vm', got 'per_world'"),
    # the tools' short names: DSNRO is sched_num_req_outstanding (dsnro_scope only says how it counts), DQLEN queue_depth
    ("dsnro_abbreviated.toml", "hosts[0].dsnro", "unknown key 'dsnro' (did you mean 'sched_num_req_outstanding', or 'dsnro_scope'?)"),
    ("dqlen_abbreviated.toml", "hosts[0].dqlen", "unknown key 'dqlen' (did you mean 'queue_depth'?)"),
    # issue 16: NUMA nodes, their SLIT distances, and the nodes paths and workloads name
    ("numa_nodes_zero.toml", "hosts[0].numa_nodes", "must be greater than or equal to 1, got 0"),
    ("numa_distances_not_square.toml", "hosts[0].numa_distances", "must be a square 2 x 2 matrix (numa_nodes = 2), got 2 rows of 1/2"),
    ("numa_distances_wrong_size.toml", "hosts[0].numa_distances", "must be a square 3 x 3 matrix (numa_nodes = 3), got 2 rows of 2"),
    ("numa_distances_diagonal_not_min.toml", "hosts[0].numa_distances", "row 1: the diagonal (10) must be the smallest in its row"),
    ("numa_penalty_negative.toml", "hosts[0].numa_penalty", "must be >= 0"),
    ("numa_path_node_out_of_range.toml", "paths[1].numa_node", "node 2 is out of range: host 'esxi01' has numa_nodes = 2 (nodes 0 ... 1)"),
    ("numa_workload_node_out_of_range.toml", "workloads[0].numa_node", "node 1 is out of range: host 'esxi01' has numa_nodes = 1 (nodes 0)"),
    ("numa_node_negative.toml", "paths[1].numa_node", "must be greater than or equal to 0, got -1"),
    ("adapter_queue_depth_float.toml", "hosts[0].adapter_queue_depth", "must be a valid integer, got 8.5"),
    # issue 16: NVMe-oF I/O queues (nvme_io_queues x nvme_queue_size tags per controller)
    (
        "nvme_io_queues_on_scsi.toml",
        "hosts[0].nvme_io_queues",
        "is for NVMe-oF only: the scenario's protocol is 'scsi' (set protocol = \"nvme\", or use queue_depth / adapter_queue_depth)",
    ),
    ("nvme_io_queues_zero.toml", "hosts[0].nvme_io_queues", "must be greater than or equal to 1, got 0"),
    ("nvme_io_queues_string.toml", "hosts[0].nvme_io_queues", "must be a valid integer, got '8'"),
    ("nvme_queue_size_below_16.toml", "hosts[0].nvme_queue_size", "must be greater than or equal to 16, got 8"),
    (
        "nvme_queue_size_without_io_queues.toml",
        "hosts[0]",
        "nvme_queue_size needs nvme_io_queues: the controller's tags are nvme_io_queues x (nvme_queue_size - 1) "
        "(Linux's default, one queue per online CPU, is not modelled; e.g. nvme_io_queues = 8)",
    ),
    # issue 15: a workload no path can serve
    (
        "workload_volume_unreachable.toml",
        "workloads[0].volume",
        "workload 'vm1' on host 'esxi01' uses volume 'far', on array remote, but 'esxi01' has paths to local only: no path reaches the volume, so the workload would never complete an I/O",
    ),
    # issue 16: offered load that changes, and traces replayed
    (
        "trace_missing_file.toml",
        "workloads[0].read_iolog",
        f"no such file 'no-such-trace.log' (looked for {BAD / 'no-such-trace.log'})",
    ),
    ("trace_bad_op.toml", "workloads[0].read_iolog", "'trace-bad-op.csv' line 3: op must be read or write (or r, w), got 'erase'"),
    (
        "trace_short_line.toml",
        "workloads[0].read_iolog",
        "'trace-short-line.log' line 4: '2 /dev/sdb write 4096' is not 'timestamp filename action offset length'",
    ),
    ("trace_unknown_format.toml", "workloads[0].iolog_format", "got 'blktrace' (did you mean 'blkparse'?)"),
    ("trace_with_rate.toml", "workloads[0]", "read_iolog gives each I/O's arrival time, op and size: drop rate_iops"),
    ("rate_schedule_unordered.toml", "workloads[0]", "rate_schedule: each step's at must come after the one before"),
    ("thinktime_closed_loop.toml", "workloads[0]", "thinktime pauses an open loop's arrivals: give rate_iops or rate"),
    ("replay_without_trace.toml", "workloads[0]", "replay_time_scale needs read_iolog (a trace to replay)"),
    # issue 38: limits hold for the derived value (a rate in bytes per second is checked as IOPS), and for a run's
    # total offered arrivals
    (
        "rate_bytes_over_limit.toml",
        "workloads[0]",
        "rate = 1.25e+14 bytes per second over a mean block size of 4,096 bytes is 3.052e+10 IOPS per job copy, "
        "more than the 1,000,000,000 (rate_iops's limit)",
    ),
    (
        "rate_schedule_bytes_over_limit.toml",
        "workloads[0]",
        "rate_schedule: the step at 1s: rate = 1.25e+14 bytes per second over a mean block size of 4,096 bytes is 3.052e+10 IOPS",
    ),
    (
        "offered_thousands_of_jobs.toml",
        "workloads",
        "the workloads offer 4.096e+13 I/Os over the 10s run ('vm1': 4,096 job copies x 1e+09 IOPS), more than the 2,000,000,000",
    ),
    ("offered_total_over_limit.toml", "workloads", "the workloads offer 1e+10 I/Os over the 10s run ('vm1': 1,000 job copies x 1e+06 IOPS)"),
    # issue 50: a check that reads raw TOML before validation (a GFC speed implies FC framing) survives any type
    ("gfc_path_host_list.toml", "paths[0].host", "must be a valid string, got ['esxi01']"),
    ("gfc_host_name_list.toml", "hosts[0].name", "must be a valid string, got ['esxi01']"),
]

# Files of tests/bad_inputs that must LOAD: what the docs allow and a reader once refused (issue 38)
LOADS = ["bom_must_load.toml", "utf16_must_load.toml"]

IDS = [name.removesuffix(".toml") if name != "." else "directory" for name, _, _ in CASES]


def _prefix(path, place: str) -> str:
    return f"{path}: {place}: " if place else f"{path}: "


def test_every_bad_input_file_has_a_row():
    files = {p.name for p in BAD.glob("*.toml")}
    rows = {name for name, _, _ in CASES} | set(LOADS)
    assert files - rows == set(), "bad input files without a row in CASES (or LOADS)"
    assert len(files) >= 20


@pytest.mark.parametrize(("name", "place", "fragment"), CASES, ids=IDS)
def test_load_scenario_locates_the_problem(name, place, fragment):
    path = BAD / name
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.load_scenario(path)
    err = info.value
    assert err.place == place
    assert fragment in err.problem
    assert err.source == str(path)
    assert str(err).startswith(_prefix(path, place))
    assert "\n" not in str(err)
    assert "more problem" not in err.problem  # one defect, one problem


@pytest.mark.parametrize(("name", "place", "fragment"), CASES, ids=IDS)
def test_cli_prints_one_line_and_exits_2(name, place, fragment, capsys):
    path = BAD / name
    assert main(["simulate", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("pathsel: error: " + _prefix(path, place))
    assert fragment in err


def _run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pathsel.cli", "simulate", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def _assert_one_clean_line(proc: subprocess.CompletedProcess, start: str, fragment: str) -> None:
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(start)
    assert fragment in proc.stderr


@pytest.mark.parametrize(
    ("name", "place", "fragment"),
    [c for c in CASES if c[0] in ("latency_no_unit.toml", "invalid_toml.toml", "use_ano_2.toml", "does_not_exist.toml")],
)
def test_cli_subprocess_exit_status_and_no_traceback(name, place, fragment):
    path = BAD / name
    _assert_one_clean_line(_run_cli(str(path)), "pathsel: error: " + _prefix(path, place), fragment)


ARG_CASES = [
    (["--duration", "0s"], "argument --duration: must be > 0"),
    # "-1s" looks like an option to argparse: it must still reach the duration check
    (["--duration", "-1s"], "argument --duration: must be > 0, got '-1s'"),
    (["--duration", "-1"], "argument --duration: must be > 0, got '-1'"),
    (["--duration", "inf"], "argument --duration: must be finite, got 'inf'"),
    (["--duration", "nan"], "argument --duration: must be finite, got 'nan'"),
    (["--duration", "1e12s"], "argument --duration: '1e12s' is more than the 1e6s (11.6 days) pathsel allows"),
    (["--duration", "1e12"], "argument --duration: '1e12' is more than the 1e6s (11.6 days) pathsel allows"),
    (["--duration", "10 furlongs"], "argument --duration: '10 furlongs': unknown time unit 'furlongs'"),
    (["--seed", "-1"], "argument --seed: must be >= 0"),
    (["--policy", "bogus"], "--policy 'bogus': unknown policy 'bogus'"),
    (["--policy", "latncy"], "--policy 'latncy': unknown policy 'latncy' (did you mean 'latency'?)"),
    (["--policy", "rr:iop=3"], "--policy 'rr:iop=3': rr has no parameter 'iop' (did you mean 'iops'? parameters: type, iops, bytes, use_ano)"),
    (
        ["--policy", "latency:num_sampling_cycles=8"],
        "--policy 'latency:num_sampling_cycles=8': num_sampling_cycles must be in 16..2147483647, got 8",
    ),
    # issue 18: a policy a system cannot run gets one refusal naming the kind that can
    (["--policy", "rr:iops=1", "--emit", "multipath.conf"], "--emit multipath.conf: rr:iops=1 is not a dm-multipath selector"),
    (
        ["--policy", "dm:service-time", "--emit", "esxcli", "--device", "naa.1"],
        "--emit esxcli: dm:service-time is not an ESXi NMP policy (rr, latency, fixed, mru); emit it with --emit multipath.conf",
    ),
    (["--policy", "rr:iops=1", "--emit", "esxcli"], "--emit esxcli: rr:iops=1: a SATP's default PSP takes no PSP options; use --emit satp-rule"),
    (["--policy", "rr:iops=1", "--emit", "satp-rule"], "--emit satp-rule: a SATP rule matches a vendor and model: give --vendor and --model"),
    (["--policy", "mpio:wp", "--emit", "powershell"], "--emit powershell: Weighted Paths needs a weight on every path"),
    (["--policy", "nvme:numa", "--emit", "powershell"], "--emit powershell: nvme:numa is not a Microsoft DSM policy"),
    (["--emit", "esxcli"], "--emit esxcli: choose one policy with --policy (the scenario runs 3:"),
    (["--policy", "preset:nope"], "--policy 'preset:nope': unknown preset 'nope'"),
    # issue 50: a setting the system cannot take (an RFC's iopolicy), and emit-only options without --emit
    (["--policy", "nvme:adaptive", "--emit", "nvme-udev"], "--emit nvme-udev: nvme:adaptive: no released kernel takes iopolicy 'adaptive'"),
    (["--device", "naa.1"], "--device: shapes what --emit KIND prints and applies only with --emit"),
    (["--sched-num-req-outstanding", "32"], "--sched-num-req-outstanding: shapes what --emit KIND prints and applies only with --emit"),
    (["--model", "FlashArray"], "--model: shapes what --emit KIND prints and applies only with --emit"),
    (["--vendor", "PURE"], "--vendor: shapes what --emit KIND prints and applies only with --emit"),
    (["--satp", "VMW_SATP_ALUA"], "--satp: shapes what --emit KIND prints and applies only with --emit"),
    # issue 50: ASCII digits only, one message (int() read Arabic-Indic three as 3 and refused superscript two in
    # its own words)
    (["--seed", "\u0663"], "argument --seed: '\u0663' is not a whole number"),
    (["--policy", "rr:iops=\u0663"], "--policy 'rr:iops=\u0663': iops must be an integer, got '\u0663'"),
    (
        ["--policy", "dm:service-time:failback=\u0663"],
        "failback must be immediate, manual, followover or a whole number of seconds > 0, got '\u0663'",
    ),
    (["--policy", "dm:service-time:polling_interval=\u0663"], "polling_interval must be a number of seconds in 0.001..2147483647, got '\u0663'"),
    (
        ["--policy", "rr:iops=1", "--emit", "esxcli", "--device", "naa.1", "--sched-num-req-outstanding", "\u00b2"],
        "argument --sched-num-req-outstanding: '\u00b2' is not a whole number",
    ),
]


@pytest.mark.parametrize(("args", "fragment"), ARG_CASES, ids=[" ".join(a) for a, _ in ARG_CASES])
def test_cli_argument_errors(args, fragment):
    _assert_one_clean_line(_run_cli("sims/esxi-latency-testdrive.toml", *args), "pathsel: error: command line: ", fragment)


def test_unreadable_file(tmp_path, monkeypatch, capsys):
    path = tmp_path / "secret.toml"
    path.write_text((BAD / "latency_zero.toml").read_text())

    def denied(self, *args, **kwargs):  # chmod 000 does not stop root, so refuse the read here
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(type(path), "open", denied)
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.load_scenario(path)
    assert (info.value.place, info.value.problem) == ("", "cannot read: Permission denied")
    assert str(info.value) == f"{path}: cannot read: Permission denied"
    assert main(["simulate", str(path)]) == 2
    assert capsys.readouterr().err == f"pathsel: error: {path}: cannot read: Permission denied\n"


@pytest.mark.parametrize("command", ["simulate", "report", "sweep"])
@pytest.mark.parametrize(
    ("value", "fragment"),
    [("-1s", "must be > 0, got '-1s'"), ("nan", "must be finite, got 'nan'"), ("1e12s", "is more than the 1e6s")],
)
def test_every_duration_option_refuses_alike(command, value, fragment, capsys):
    with pytest.raises(SystemExit) as info:
        main([command, "--duration", value])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("pathsel: error: command line: argument --duration: ")
    assert fragment in err


# -- issue 18: what hosts print and what measurements say ------------------------------------------------

IMPORTED = ROOT / "tests" / "data" / "import"

# (command after "pathsel", the bad file, expected place, fragment): one file with one defect each (tests/data/import/bad)
OUTPUT_CASES = [
    (
        ["import", "esxcli", "bad/esxcli-device-list-cut-short.txt", "esxcli-core-path-list.txt"],
        "line 21",
        "device naa.624a93708a75393becad4e43000113ef: no 'Path Selection Policy:' line (is the output cut short?)",
    ),
    (["import", "esxcli", "bad/esxcli-device-list-bad-iops.txt", "esxcli-core-path-list.txt"], "line 16", "iops='one' is not a whole number"),
    (
        ["import", "esxcli", "bad/esxcli-device-list-unknown-psp.txt", "esxcli-core-path-list.txt"],
        "line 15",
        "Path Selection Policy 'PSP_EMC_PP' is not one pathsel models",
    ),
    (
        ["import", "esxcli", "bad/esxcli-device-list-config-cut.txt", "esxcli-core-path-list.txt"],
        "line 16",
        "Path Selection Policy Device Config is cut short (its braces do not close)",
    ),
    (
        ["import", "esxcli", "esxcli-nmp-device-list.txt", "bad/esxcli-core-path-list-cut-short.txt"],
        "line 271",
        "no 'Device:' line (is the output cut short?)",
    ),
    (
        ["import", "esxcli", "esxcli-nmp-device-list.txt", "bad/esxcli-core-path-list-garbled.txt"],
        "line 10",
        "expected 'Key: Value' under a path, got 'Plugin NMP'",
    ),
    (["import", "multipath", "bad/multipath-ll-cut-short.txt"], "line 6", "a path group with no paths (is the output cut short?)"),
    (
        ["import", "multipath", "bad/multipath-ll-garbled-path.txt"],
        "line 5",
        "expected a path line such as '|- 1:0:0:1 sdb 8:16 active ready running'",
    ),
    (["import", "multipath", "bad/multipath-ll-unknown-selector.txt"], "line 3", "path_selector 'weighted-rr 0' is not a dm selector pathsel models"),
    (["import", "multipath", "multipath-ll.txt", "bad/multipath-conf-unclosed.conf"], "line 12", "section 'devices' opened here is never closed"),
    (
        ["import", "multipath", "multipath-ll.txt", "bad/multipath-conf-bad-failback.conf"],
        "line 18",
        "failback must be immediate, manual, followover or a whole number of seconds > 0, got 'sometimes'",
    ),
    (["import", "nvme", "bad/nvme-list-subsys-cut-short.txt"], "line 1", "nvme-subsys0 lists no controllers (is the output cut short?)"),
    (["import", "nvme", "bad/nvme-list-subsys-bad-ana.txt"], "line 6", "ANA state 'semi-optimized' is not one of"),
    (["import", "nvme", "nvme-list-subsys.txt", "bad/nvme-iopolicy-bad.txt"], "line 1", "iopolicy 'fastest' is not numa, round-robin, queue-depth"),
    (["import", "mpclaim", "bad/mpclaim-disk-cut-short.txt"], "line 1", "MPIO Disk0 says 4 paths but lists 2 (is the output cut short?)"),
    (["import", "mpclaim", "bad/mpclaim-disk-vendor-specific.txt"], "line 1", "load balance policy 'Vendor Specific' is not one pathsel models"),
    (["calibrate", "--fit", "service_time", "--measured", "bad/fio-cut-short.json"], "line 104, column 26", "the JSON ends early (cut short?)"),
    (["calibrate", "--fit", "service_time", "--measured", "bad/fio-no-clat.json"], "jobs[0].write.clat_ns", "missing (no completion latency"),
    (["calibrate", "--fit", "service_time", "--measured", "bad/fio-normal-output.txt"], "line 1", "not a measurement pathsel reads"),
    (
        ["calibrate", "--fit", "service_time", "--measured", "bad/esxtop-cut-short.csv"],
        "line 13",
        "20 values, the header (line 1) has 37 (the file is cut short?)",
    ),
    (["calibrate", "--fit", "service_time", "--measured", "bad/esxtop-not-batch.csv"], "line 1", "not a measurement pathsel reads"),
    (
        ["calibrate", "--fit", "service_time", "--measured", "bad/iostat-cut-short.txt"],
        "line 9",
        "6 values, the Device header (line 6) has 23 (the file is cut short?)",
    ),
    (
        ["calibrate", "--fit", "service_time", "--measured", "bad/iostat-without-x.txt"],
        "line 3",
        "the Device header has no r/s column: run iostat -x",
    ),
]


def _output_args(args: list[str]) -> list[str]:
    return [str(IMPORTED / a) if a.endswith((".txt", ".conf", ".json", ".csv")) else a for a in args]


def test_every_bad_output_file_has_a_row():
    files = {p.name for p in (IMPORTED / "bad").iterdir()}
    rows = {a.removeprefix("bad/") for args, _, _ in OUTPUT_CASES for a in args if a.startswith("bad/")}
    assert files == rows


@pytest.mark.parametrize(("args", "place", "fragment"), OUTPUT_CASES, ids=[next(a for a in c[0] if a.startswith("bad/")) for c in OUTPUT_CASES])
def test_bad_output_gets_one_located_line(args, place, fragment, capsys):
    bad = str(IMPORTED / next(a for a in args if a.startswith("bad/")))
    assert main(_output_args(args)) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"pathsel: error: {bad}: {place}: ")
    assert fragment in err


def test_bad_output_through_the_api():
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.import_outputs("multipath", [IMPORTED / "bad" / "multipath-ll-garbled-path.txt"])
    assert (info.value.place, info.value.source) == ("line 5", str(IMPORTED / "bad" / "multipath-ll-garbled-path.txt"))
    with pytest.raises(pathsel.measured.MeasureError) as info:
        pathsel.read_measurements(IMPORTED / "bad" / "esxtop-cut-short.csv")
    assert info.value.place == "line 13"


def test_import_subprocess_one_line_no_traceback():
    bad = IMPORTED / "bad" / "nvme-list-subsys-bad-ana.txt"
    proc = subprocess.run([sys.executable, "-m", "pathsel.cli", "import", "nvme", str(bad)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    _assert_one_clean_line(proc, f"pathsel: error: {bad}: line 6: ", "ANA state 'semi-optimized'")


# -- issue 15: every command refuses a bad file alike, and writes nothing -------------------------------------


@pytest.mark.parametrize("command", ["predict", "report", "sweep"])
@pytest.mark.parametrize(("name", "place", "fragment"), CASES, ids=IDS)
def test_every_command_refuses_a_bad_file_and_writes_nothing(command, name, place, fragment, tmp_path, capsys):
    path = BAD / name
    out = {"report": ["-o", str(tmp_path / "r.html")], "sweep": ["--out", str(tmp_path / "s.csv")]}.get(command, [])
    assert main([command, str(path), *out]) == 2
    stdout, err = capsys.readouterr()
    assert stdout == "" and err.count("\n") == 1
    assert err.startswith("pathsel: error: " + _prefix(path, place)) and fragment in err
    assert list(tmp_path.iterdir()) == []


# -- issue 15: hostile command lines: one located line, exit 2, nothing run, nothing written ------------------

_SCENARIO = (BAD / "latency_zero.toml").read_text().replace('"0us"', '"60us"')
_FILES = {
    "ok.toml": 'duration = "0.2s"\n' + _SCENARIO,
    "ms.toml": 'duration = "0.2s"\ninterval = "1ms"\n' + _SCENARIO,
    "sweep_bool.toml": _SCENARIO + '\n[sweep.params]\n"rr.iops" = [true, 2]\n',
    "sweep_twice.toml": _SCENARIO + '\n[sweep.params]\n"rr.iops" = [1, 2]\n"rr.IOPS" = [3]\n',
    "sweep_runs.toml": _SCENARIO + "\n[sweep]\nreplications = 1000000\n",
}
_S = "{tmp}/ok.toml"

# (command line, with {tmp} for the test's folder; the one line it must print after "pathsel: error: ")
COMMAND_CASES = [
    # /dev/zero never ends: its first chunk holds a NUL, refused at once (and never more than 64 MB read)
    (["simulate", "/dev/zero"], "/dev/zero: line 1: not text (a NUL byte: a binary file?)"),
    (["predict", "/dev/zero"], "/dev/zero: line 1: not text (a NUL byte: a binary file?)"),
    (["report", "/dev/zero", "-o", "{tmp}/r.html"], "/dev/zero: line 1: not text (a NUL byte: a binary file?)"),
    (["sweep", "/dev/zero", "--out", "{tmp}/s.csv"], "/dev/zero: line 1: not text (a NUL byte: a binary file?)"),
    (["validate", "/dev/zero"], "/dev/zero: line 1: not text (a NUL byte: a binary file?)"),
    # numbers on the command line: finite, in range, not a boolean, after unit scaling
    (["simulate", _S, "--duration", "1e308s"], "command line: argument --duration: '1e308s' is more than the 1e6s (11.6 days) pathsel allows"),
    (["simulate", _S, "--duration", "1e308min"], "command line: argument --duration: '1e308min' is more than the 1e6s"),
    (["simulate", _S, "--duration", "0.5ns"], "command line: argument --duration: '0.5ns' is shorter than 1ns, the resolution of pathsel's clock"),
    (["simulate", _S, "--duration", "true"], "command line: argument --duration: 'true' is not a duration"),
    (["simulate", _S, "--seed", "1e3"], "command line: argument --seed: '1e3' is not a whole number"),
    (["report", _S, "-o", "{tmp}/r.html", "--duration", "-1s"], "command line: argument --duration: must be > 0, got '-1s'"),
    (["sweep", _S, "--duration", "-1s"], "command line: argument --duration: must be > 0, got '-1s'"),
    # a run's own duration makes a time series too large: the figure, and the interval that fits
    (
        ["simulate", "{tmp}/ms.toml", "--duration", "1e5"],
        "{tmp}/ms.toml: interval: interval 1ms over a 100000s run gives 100,000,000 bins per path; with 2 paths the time "
        "series takes 7.2 GB, more than the 0.4 GB pathsel keeps: write an interval of 20ms or more",
    ),
    (
        ["sweep", _S, "--duration", "1e5", "--param", "interval=1ms"],
        "{tmp}/ok.toml with interval=1ms: interval: interval 1ms over a 100000s run gives 100,000,000 bins per path",
    ),
    (
        ["sweep", _S, "--param", "interval=1ns"],
        "{tmp}/ok.toml with interval=1ns: interval: interval 1ns over a 0.2s run gives 200,000,000 bins per path",
    ),
    # policies on the command line: each parameter once, each label once
    (
        ["simulate", _S, "--policy", "rr:iops=1,iops=2"],
        "command line: --policy 'rr:iops=1,iops=2': 'iops' is given twice in policy spec 'rr:iops=1,iops=2': give each parameter once",
    ),
    (["simulate", _S, "--policy", "rr:label=x,label=y"], "command line: --policy 'rr:label=x,label=y': 'label' is given twice"),
    (
        ["simulate", _S, "--policy", "latency:num_sampling_cycles=16,num-sampling-cycles=32"],
        "command line: --policy 'latency:num_sampling_cycles=16,num-sampling-cycles=32': 'num-sampling-cycles' is given twice",
    ),
    (
        ["simulate", _S, "--policy", "rr", "--policy", "rr"],
        "command line: --policy 'rr': is labelled 'rr', as --policy 'rr' is: two rows of one name; give one its own label "
        "(SPEC,label=NAME) or drop it",
    ),
    (
        ["predict", _S, "--policy", "rr:label=a", "--policy", "mru:label=a"],
        "command line: --policy 'mru:label=a': is labelled 'a', as --policy 'rr:label=a' is",
    ),
    (["simulate", _S, "--policy", "rr:iops=inf"], "command line: --policy 'rr:iops=inf': iops must be an integer, got 'inf'"),
    (["simulate", _S, "--policy", "p2c-ewma:decay=nan"], "command line: --policy 'p2c-ewma:decay=nan': decay must be in 0.001..86400, got nan"),
    (["simulate", _S, "--policy", "rr:iops=true"], "command line: --policy 'rr:iops=true': iops must be an integer, got 'true'"),
    (["sweep", _S, "--policy", "rr", "--policy", "rr"], "command line: --policy 'rr': is labelled 'rr', as --policy 'rr' is"),
    # sweeps: the output checked before any run, parameters once, the plan of a size that fits
    (
        ["sweep", _S, "--out", "/nonexistent/dir/x.csv"],
        "/nonexistent/dir/x.csv: no such folder '/nonexistent/dir': create it first, or write the results table elsewhere",
    ),
    (["sweep", _S, "--out", "{tmp}/x.txt"], "{tmp}/x.txt: results go to a .parquet or .csv file"),
    (["sweep", _S, "--param", "rr.iops=true"], "command line: --param rr.iops: iops = true: a boolean is not a policy parameter value"),
    (["sweep", _S, "--param", "rr.iops=inf"], "command line: --param rr.iops: iops must be an integer, got 'inf'"),
    (["sweep", _S, "--param", "p2c-ewma.decay=nan"], "command line: --param p2c-ewma.decay: decay must be in 0.001..86400, got nan"),
    (
        ["sweep", _S, "--param", "latency.num_sampling_cycles=16", "--param", "latency.num-sampling-cycles=32"],
        "command line: --param latency.num-sampling-cycles: is 'latency.num_sampling_cycles' again (hyphens, underscores and "
        "case are the same): list all its values under one name",
    ),
    (
        ["sweep", _S, "--param", "workloads[0].iodepth=true"],
        "{tmp}/ok.toml with workloads[0].iodepth=true: workloads[0].iodepth: must be a whole number, got true",
    ),
    (
        ["sweep", _S, "--param", "workloads[0].iodepth=65536", "--param", "workloads[0].numjobs=4096"],
        "{tmp}/ok.toml with workloads[0].iodepth=65536, workloads[0].numjobs=4096: workloads[0]: 4,096 jobs x iodepth 65,536 "
        "= 268,435,456 outstanding I/Os, more than the 1,048,576",
    ),
    (
        ["sweep", _S, "--param", "paths[0].distance_km=inf"],
        "{tmp}/ok.toml with paths[0].distance_km=inf: paths[0].distance_km: must be a valid number, got 'inf'",
    ),
    (["sweep", _S, "--param", "duration=1e308s"], "{tmp}/ok.toml with duration=1e308s: duration: '1e308s' is more than the 1e6s"),
    (
        ["sweep", _S, "--replications", "1000000000"],
        "command line: --replications: 1 grid point x 1 policy x 1,000,000,000 replications = 1,000,000,000 runs, more than "
        "the 100,000 pathsel plans in one sweep: fewer replications or values",
    ),
    (["sweep", "{tmp}/sweep_runs.toml"], "{tmp}/sweep_runs.toml: sweep.replications: 1 grid point x 1 policy x 1,000,000 replications"),
    (["sweep", "{tmp}/sweep_bool.toml"], "{tmp}/sweep_bool.toml: sweep.params.rr.iops: iops = true: a boolean is not a policy parameter value"),
    (["sweep", "{tmp}/sweep_twice.toml"], "{tmp}/sweep_twice.toml: sweep.params.rr.IOPS: is 'rr.iops' again"),
    # reports and recommendations: where they go is checked before the run
    (["report", _S, "-o", "/nonexistent/dir/r.html"], "/nonexistent/dir/r.html: no such folder '/nonexistent/dir'"),
    (["report", _S, "-o", "{tmp}"], "{tmp}: is a folder: give the report a file name"),
    (["recommend", "/nonexistent.csv", "--html", "/nonexistent/dir/r.html"], "/nonexistent/dir/r.html: no such folder"),
    (["recommend", "/dev/zero"], "/dev/zero: is not a regular file (a device or a pipe): sweep results are a .parquet or .csv file"),
    (["recommend", "{tmp}/zero.csv"], "{tmp}/zero.csv: is not a regular file (a device or a pipe)"),
    (["sweep", _S, "--out", "{tmp}/zero.csv"], "{tmp}/zero.csv: is not a regular file (a device or a pipe): the results table is read back"),
    # issue 50: emit-only options without --emit, on recommend too (refused before the table is read)
    (["recommend", "{tmp}/zero.csv", "--device", "naa.1"], "command line: --device: shapes what --emit KIND prints and applies only with --emit"),
    (["recommend", "{tmp}/zero.csv", "--model", "x"], "command line: --model: shapes what --emit KIND prints and applies only with --emit"),
]


@pytest.mark.parametrize(("argv", "line"), COMMAND_CASES, ids=[" ".join(a).replace("{tmp}/", "") for a, _ in COMMAND_CASES])
def test_hostile_command_lines(argv, line, tmp_path, capsys, monkeypatch):
    import pathsel.studies.sweep as sweep_module

    for name, text in _FILES.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "zero.csv").symlink_to("/dev/zero")  # a results table that never ends
    before = sorted(tmp_path.iterdir())

    def no_run(*args, **kwargs):  # every refusal comes before the first run
        raise AssertionError("a run started")

    monkeypatch.setattr(sweep_module, "simulate", no_run)
    try:
        code = main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    except SystemExit as e:  # argparse's own refusals
        code = e.code
    stdout, err = capsys.readouterr()
    assert (code, stdout) == (2, "")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("pathsel: error: " + line.replace("{tmp}", str(tmp_path))), err
    assert sorted(tmp_path.iterdir()) == before  # nothing written


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["/dev/zero"], "pathsel: error: /dev/zero: line 1: not text (a NUL byte: a binary file?)"),
        (["sims/esxi-latency-testdrive.toml", "--duration", "1e308s"], "pathsel: error: command line: argument --duration: '1e308s'"),
        (["sims/esxi-latency-testdrive.toml", "--policy", "rr", "--policy", "rr"], "pathsel: error: command line: --policy 'rr': is labelled"),
        ([str(BAD / "nested_5000.toml")], f"pathsel: error: {BAD / 'nested_5000.toml'}: line 2: arrays or inline tables nested too deep"),
    ],
    ids=["dev-zero", "duration-1e308s", "same-label", "nested-5000"],
)
def test_hostile_inputs_in_a_fresh_process(args, fragment):
    """No traceback from the interpreter itself (a RecursionError, a MemoryError), and an end."""
    proc = _run_cli(*args)
    _assert_one_clean_line(proc, fragment, "")


# -- issue 15: validation case files: numbers finite, types as documented -------------------------------------

# (what to replace in sims/validation/failover.toml, with what, the place, the problem it must print)
CASE_CASES = [
    ("expected = 16\n", "expected = inf\n", "validation.checks[0].expected", "must be a finite number, got inf"),
    ("expected = 16\n", "expected = nan\n", "validation.checks[0].expected", "must be a finite number, got nan"),
    ("expected = 16\n", "expected = true\n", "validation.checks[0].expected", "must be a number, got true (a boolean is not a number)"),
    ("tolerance = 0\n", "tolerance = nan\n", "validation.checks[0].tolerance", "must be a finite number, got nan"),
    ('quick_duration = "0.6s"', 'quick_duration = "1e308s"', "validation.quick_duration", "'1e308s' is more than the 1e6s"),
    ('quick_duration = "0.6s"', 'quick_duration = "inf s"', "validation.quick_duration", "'inf s': must be finite"),
    ('case = "failover"', 'case = "failover"\nengines = "fast"', "validation.engines", 'must be a list such as ["fast", "reference"], got \'fast\''),
    ('case = "failover"', 'case = "failover"\nevery_builtin_policy = 1', "validation.every_builtin_policy", "must be true or false, got 1"),
    (
        'case = "failover"',
        'case = "failover"\nscenario = 5',
        "validation.scenario",
        'must be the name of a scenario file, such as "../metro.toml", got 5',
    ),
    (
        'case = "failover"',
        'case = "failover"\nrandom_split = { A = inf, B = 1 }',
        "validation.random_split.A",
        "a weight must be a finite number >= 0, got inf",
    ),
    ('metric = "failover_retried"', 'metric = "failover_retried"\nrun = 5', "validation.checks[0].run", "must be a string, got 5"),
    (
        'metric = "failover_retried"',
        'metric = "failover_retried"\npaths = "A"',
        "validation.checks[0].paths",
        "must be a list of path names, got 'A'",
    ),
    ('duration = "1s"', 'duration = "1e308s"', "duration", "'1e308s' is more than the 1e6s"),
    ("iodepth = 16", "iodepth = true", "workloads[0].iodepth", "must be a whole number, got true (a boolean is not a number)"),
    ('detection = "2ms"', 'detection = "2ms"\nio_timeout = "1ns"', "hosts[0].io_timeout", "'1ns' is shorter than the 10us pathsel takes"),
]


@pytest.mark.parametrize(("old", "new", "place", "problem"), CASE_CASES, ids=[c[1].strip().replace("\n", " ") for c in CASE_CASES])
def test_validation_case_files_refuse_hostile_values(old, new, place, problem, tmp_path, capsys):
    from pathsel.studies.validate import load_case

    text = (ROOT / "sims" / "validation" / "failover.toml").read_text()
    assert old in text
    path = tmp_path / "case.toml"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(pathsel.ScenarioError) as info:
        load_case(path)
    assert (info.value.source, info.value.place) == (str(path), place)
    assert info.value.problem.startswith(problem)
    assert main(["validate", str(path)]) == 2
    stdout, err = capsys.readouterr()
    assert stdout == "" and err.count("\n") == 1 and err.startswith(f"pathsel: error: {path}: {place}: {problem}")


_EVERY = ('case = "failover"', 'case = "failover"\nevery_builtin_policy = true')
_NO_POLICIES = ('[[policies]]\nspec = "fixed"\n', "")


def _top(line: str) -> tuple[str, str]:
    return ('name = "Failover', line + '\nname = "Failover')


# issue 50: (edits of sims/validation/failover.toml, the place, the problem): policies that are not tables reached
# every_builtin_policy's p.get (AttributeError); the interval load_case sets was blamed as if the file wrote it
CASE_EDITS = [
    ([_EVERY, _NO_POLICIES, _top('policies = [1, "fixed"]')], "policies[0]", 'must be a spec string such as "rr:iops=1" or a table'),
    ([_EVERY, _NO_POLICIES, _top('policies = "fixed"')], "policies", "must be a list, got 'fixed'"),
    ([_EVERY, _NO_POLICIES, _top('policies = { spec = "fixed" }')], "policies", "must be a list, got {'spec': 'fixed'}"),
    ([_EVERY, _NO_POLICIES, _top("policies = [[1], 2.5]")], "policies[0]", "a table with a spec key, got [1]"),
    ([_EVERY, _NO_POLICIES, _top("policies = [{ spec = 5 }]")], "policies[0].spec", "must be a valid string, got 5"),
    (
        [('quick_duration = "0.6s"', 'quick_duration = "1ns"')],
        "validation.quick_duration",
        "'1ns' sets the time series' interval to 1/20 of it, 0.000us, which cannot be: must be > 0 (or write interval in the scenario)",
    ),
    (
        [
            ('duration = "1s"\n\n[validation]', 'duration = "1ns"\n\n[validation]'),
            ('quick_duration = "0.6s"\n', ""),
            ('duration = "1s"\nfull', "full"),
        ],
        "duration",
        "'1ns' sets the time series' interval to 1/20 of it",
    ),
]


@pytest.mark.parametrize(("edits", "place", "problem"), CASE_EDITS, ids=[" ".join(new.strip() for _, new in c[0]) for c in CASE_EDITS])
def test_validation_case_files_locate_what_the_file_wrote(edits, place, problem, tmp_path, capsys):
    from pathsel.studies.validate import load_case

    text = (ROOT / "sims" / "validation" / "failover.toml").read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new, 1)
    path = tmp_path / "case.toml"
    path.write_text(text)
    with pytest.raises(pathsel.ScenarioError) as info:
        load_case(path)
    assert (info.value.source, info.value.place) == (str(path), place)
    assert problem in info.value.problem
    assert main(["validate", str(path)]) == 2
    stdout, err = capsys.readouterr()
    assert stdout == "" and "Traceback" not in err and err.startswith(f"pathsel: error: {path}: {place}: ")


# one value of each TOML type (and the ones Python cannot hash), for every key of a scenario
_EVERY_TOML_TYPE = [["h"], {"x": 1}, [{"a": 1}], 1, -1, 1.5, float("nan"), True, "x", "", [1, "a"], [[1]]]
_EVERY_TOML_TYPE += [datetime.date(2020, 1, 1), datetime.time(1, 2), datetime.datetime(2020, 1, 1)]


def _keys(data, at=()):
    if isinstance(data, dict):
        items = data.items()
    elif isinstance(data, list):
        items = enumerate(data)
    else:
        return
    for k, v in items:
        yield (*at, k)
        yield from _keys(v, (*at, k))


@pytest.mark.parametrize(
    "name",
    ["library/metro-uniform-busy-local-array.toml", "library/fabric-fewer-links.toml", "azure-m-series-nic-numa.toml"],
)
def test_checks_before_validation_survive_any_toml_type(name):
    """Issue 50: every key of a scenario (GFC speeds, hosts named by paths, cpulists, tables of tables) given a value
    of every TOML type: the scenario loads or is a ScenarioError; no check that reads raw TOML before validation
    (a GFC speed's host looked up by a list: unhashable) raises anything else."""
    data = tomllib.loads((ROOT / "sims" / name).read_text())
    for key in list(_keys(data)):
        for value in _EVERY_TOML_TYPE:
            spoilt = copy.deepcopy(data)
            at = spoilt
            for k in key[:-1]:
                at = at[k]
            at[key[-1]] = value
            try:
                scenario_from_data(spoilt, name)
            except pathsel.ScenarioError:
                pass


def test_validate_json_is_strict_json(tmp_path, capsys):
    """An error against a tiny expected figure overflows to infinity: null in the JSON, never an Infinity token."""
    text = (ROOT / "sims" / "validation" / "failover.toml").read_text()
    path = tmp_path / "tiny.toml"
    path.write_text(text.replace("expected = 2000\n", "expected = 5e-324\n"))
    assert main(["validate", "--quick", "--engine", "fast", "--json", str(path)]) == 1
    out = capsys.readouterr().out

    def refuse(token):
        raise AssertionError(f"{token} in validate --json")

    rows = json.loads(out, parse_constant=refuse)["cases"]
    tiny = [r for r in rows if r["check"] == "failover_resume_max_us"]
    assert [(r["error"], r["passed"]) for r in tiny] == [(None, False)]


# -- issue 15: what is accepted: a byte order mark, UTF-16; long values quoted short -------------------------


@pytest.mark.parametrize(("encoding", "prefix"), [("utf-8", "\ufeff"), ("utf-16", "")], ids=["utf-8-bom", "utf-16"])
def test_a_byte_order_mark_is_accepted(encoding, prefix, tmp_path, capsys):
    path = tmp_path / "notepad.toml"
    path.write_text(prefix + _FILES["ok.toml"], encoding=encoding)
    assert pathsel.load_scenario(path).runs[0].label == "rr:iops=1"
    assert main(["predict", str(path)]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("name", LOADS)
@pytest.mark.parametrize(
    "command",
    ["load", "simulate", "predict", "report", "sweep", "calibrate", "validate"],
)
def test_every_reader_of_scenarios_loads_a_marked_file(name, command, tmp_path, capsys):
    """Issue 38: calibrate read its scenario on its own (read_text kept the BOM, and tomllib failed); every path
    that reads a scenario, a validation case or a sweep file now goes through the one reader."""
    path = BAD / name
    if command == "load":
        assert pathsel.load_scenario(path).runs[0].label == "rr:iops=1"
        return
    if command == "calibrate":  # read the scenario, then fail on the measured file: its error proves the read
        empty = tmp_path / "empty.txt"
        empty.write_bytes(b"")
        assert main(["calibrate", str(path), "--fit", "service_time", "--measured", str(empty)]) == 2
        assert capsys.readouterr().err == f"pathsel: error: {empty}: is empty\n"
        return
    if command == "validate":  # the failover case, as the editor that adds the mark would save it
        case = tmp_path / "case.toml"
        text = (ROOT / "sims" / "validation" / "failover.toml").read_text(encoding="utf-8")
        case.write_bytes(path.read_bytes()[:3] + text.encode() if name.startswith("bom") else text.encode("utf-16"))
        assert main(["validate", "--quick", "--engine", "fast", str(case)]) == 0
        assert "error" not in capsys.readouterr().err
        return
    extra = {
        "simulate": ["--duration", "10ms"],
        "report": ["--duration", "10ms", "-o", str(tmp_path / "r.html")],
        "sweep": ["--duration", "10ms", "--replications", "1", "--out", str(tmp_path / "s.csv")],
    }.get(command, [])
    assert main([command, str(path), *extra]) == 0
    assert "error" not in capsys.readouterr().err


def test_a_huge_value_is_quoted_short(tmp_path, capsys):
    path = tmp_path / "pasted.toml"
    path.write_text(_FILES["ok.toml"].replace('name = "vm1"', 'name = "vm1"\nrw = "' + "x" * 1_000_000 + '"'))
    assert main(["simulate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 2100
    assert err.startswith(f"pathsel: error: {path}: workloads[0].rw: must be ")
