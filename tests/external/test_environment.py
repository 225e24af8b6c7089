"""The agent environment: its key, and the message that names a requirement pip could not install."""
from __future__ import annotations

from mlab.external.environment import environment_key, install_failure


def test_the_key_follows_the_requirements_and_the_python():
    base = environment_key(["a==1"], "3.11.7 x86_64")
    assert base == environment_key(["a==1"], "3.11.7 x86_64")
    assert len({base, environment_key(["a==2"], "3.11.7 x86_64"), environment_key(["a==1"], "3.12.1 x86_64"),
                environment_key(["a==1"], "3.11.7 x86_64", ["b==1"])}) == 4


def test_a_requirement_pip_cannot_find_is_named():
    output = ("ERROR: Could not find a version that satisfies the requirement mini-swe-agent==99.0 (from versions: "
              "1.0.0, 1.17.5)\nERROR: No matching distribution found for mini-swe-agent==99.0\n")
    message = install_failure(["requests>=2", "mini-swe-agent==99.0"], output)
    assert message == "requirement 'mini-swe-agent==99.0' could not be installed: pip found no matching distribution"


def test_another_failure_names_the_requirement_in_pips_errors():
    output = "Collecting igraph\n  Building wheel\nERROR: Failed building wheel for igraph\n"
    message = install_failure(["pandas>=2", "igraph>=0.11"], output)
    assert message.startswith("requirement 'igraph>=0.11' could not be installed: ERROR: Failed building wheel")
