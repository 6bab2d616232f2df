"""multipathd's shaky-path keys and polling_interval through pathsel import and --emit multipath.conf (round trips,
bad values refused with their line)."""

from __future__ import annotations

import pytest

from pathsel.errors import ScenarioError
from pathsel.policies.spec import parse_spec
from pathsel.scenario.systems import emit, import_outputs, read_emitted

from .conftest import ROOT

DATA = ROOT / "tests" / "data" / "import"

SAN = "san_path_err_threshold=2,san_path_err_forget_rate=10,san_path_err_recovery_time=60"
MARGINAL = (
    "marginal_path_double_failed_time=60,marginal_path_err_sample_time=120,marginal_path_err_rate_threshold=10,marginal_path_err_recheck_gap_time=300"
)


@pytest.mark.parametrize(
    "spec, options",
    [
        (f"dm:service-time:{SAN}", {}),
        (f"dm:service-time:failback=followover,{MARGINAL}", {"vendor": "NETAPP", "model": "LUN.*"}),
        ("dm:queue-length:polling_interval=10,san_path_err_threshold=3", {"device": "3600a098038314c4a433f5774717a3046"}),
        ("dm:round-robin:polling_interval=2", {}),
    ],
)
def test_emitted_shaky_path_keys_read_back(spec, options):
    text = emit(spec, "multipath.conf", **options)
    back = read_emitted("multipath.conf", text)
    assert back.spec == parse_spec(spec)[0].text
    if "polling_interval=10" in spec:
        assert "defaults {\n\tpolling_interval 10\n}" in text


def test_a_fractional_polling_interval_is_not_emitted():
    with pytest.raises(ScenarioError, match="polling_interval 0.5 is not a whole number"):
        emit("dm:service-time:polling_interval=0.5", "multipath.conf")


def _conf(tmp_path, body: str):
    conf = tmp_path / "multipath.conf"
    conf.write_text(body)
    return conf


def test_import_reads_the_shaky_path_keys_and_polling_interval(tmp_path):
    conf = _conf(
        tmp_path,
        "defaults {\n\tpolling_interval 10\n\tfailback followover\n}\n"
        "devices {\n\tdevice {\n\t\tvendor NETAPP\n\t\tproduct LUN\n"
        "\t\tsan_path_err_threshold 2\n\t\tsan_path_err_forget_rate 10\n\t\tsan_path_err_recovery_time 60\n\t}\n}\n",
    )
    imp = import_outputs("multipath", [DATA / "multipath-ll.txt", conf])
    text = imp.scenario.runs[0].policy.text
    assert "failback=followover" in text and "san_path_err_threshold=2" in text and "san_path_err_recovery_time=60" in text
    assert "polling_interval=10" in text


@pytest.mark.parametrize("value", ["-1", "often", "1.5", "5,failback=immediate"])
def test_import_refuses_a_bad_shaky_value_with_its_line(tmp_path, value):
    conf = _conf(tmp_path, f"defaults {{\n\tsan_path_err_threshold {value}\n}}\n")
    with pytest.raises(ScenarioError) as e:
        import_outputs("multipath", [DATA / "multipath-ll.txt", conf])
    assert "line 2" in str(e.value) and "san_path_err_threshold must be no or a whole number > 0" in str(e.value)


def test_no_reads_as_off(tmp_path):
    conf = _conf(tmp_path, "defaults {\n\tmarginal_path_err_sample_time no\n}\n")
    imp = import_outputs("multipath", [DATA / "multipath-ll.txt", conf])
    assert "marginal" not in imp.scenario.runs[0].policy.text


def test_a_huge_shaky_value_is_refused_at_its_multipath_conf_line(tmp_path):
    conf = _conf(tmp_path, "defaults {\n\tsan_path_err_threshold 99999999999\n}\n")
    with pytest.raises(ScenarioError) as e:
        import_outputs("multipath", [DATA / "multipath-ll.txt", conf])
    assert str(conf) in str(e.value) and "line 2" in str(e.value) and "at most 2147483647" in str(e.value)


def test_a_polling_interval_the_import_refuses_is_not_emitted():
    emit("dm:service-time:polling_interval=1000000", "multipath.conf")  # the import's bound: read back below
    with pytest.raises(ScenarioError, match="polling_interval 1000001 is more than 1,000,000 s"):
        emit("dm:service-time:polling_interval=1000001", "multipath.conf")
