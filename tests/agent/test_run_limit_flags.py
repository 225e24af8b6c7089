"""`mlab run` takes every limit an experiment can set on its command line."""
import pytest

from mlab.cli import build_parser
from mlab.errors import UsageError
from mlab.limits import limit_overrides, parse_size


def limits_of(*argv):
    return limit_overrides(build_parser().parse_args(["run", "house-price", *argv]))


def test_script_timeout_and_memory_become_limits():
    assert limits_of("--script-timeout", "5m", "--memory", "8GiB", "--steps", "3") == {
        "steps": 3, "script_timeout": 300.0, "memory": 8 * 2**30}


def test_disk_becomes_a_limit():
    assert limits_of("--disk", "20MiB") == {"disk": 20 * 2**20}


def test_a_sweep_passes_plain_numbers():
    assert limits_of("--script-timeout", "90", "--memory", "536870912") == {
        "script_timeout": 90.0, "memory": 536870912}


@pytest.mark.parametrize("text", ["lots", "8 parsecs", "-1GiB", "0"])
def test_a_bad_size_is_a_usage_error(text):
    with pytest.raises(UsageError, match="is not a size"):
        parse_size(text)


@pytest.mark.parametrize("flag, value, message", [
    ("--steps", "0", "--steps must be 1 or more"), ("--tokens", "0", "--tokens must be 1 or more"),
    ("--cost", "0", "--cost must be more than 0")])
def test_a_limit_below_its_least_is_a_usage_error(flag, value, message):
    with pytest.raises(UsageError, match=message):
        limits_of(flag, value)


def test_drive_takes_the_two_limits_it_has():
    args = build_parser().parse_args(["drive", "house-price", "--actions", "a.json", "--steps", "4", "--time", "1h30m"])
    assert limit_overrides(args) == {"steps": 4, "time": 5400.0}
