"""The key table `mlab run` checks before importing litellm names the variables litellm itself
looks for, so the early answer and litellm's own check agree."""
import pytest

from mlab.cli.keys import PROVIDER_KEYS, check_known_keys
from mlab.models.client import import_litellm
from mlab.models.errors import MissingKey


@pytest.mark.parametrize("provider", sorted(PROVIDER_KEYS))
def test_each_providers_variables_are_litellms(provider, monkeypatch):
    for variables in PROVIDER_KEYS.values():
        for variable in variables:
            monkeypatch.delenv(variable, raising=False)
    found = import_litellm().validate_environment(model=f"{provider}/some-model")
    assert sorted(found["missing_keys"]) == sorted(PROVIDER_KEYS[provider])


def test_a_missing_key_names_the_variable_the_tiers_and_their_options(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    check_known_keys({"main": "openai/gpt-4o", "fast": "ollama/llama3", "edit": "mlab/demo"})  # all present or keyless
    with pytest.raises(MissingKey) as raised:
        check_known_keys({"main": "openai/gpt-4o", "fast": "anthropic/claude-haiku-4-5",
                          "edit": "anthropic/claude-haiku-4-5"})
    assert str(raised.value) == ("the fast and edit tiers' model anthropic/claude-haiku-4-5 needs ANTHROPIC_API_KEY "
                                 "in the environment; set it or choose another model with --fast-model or "
                                 "--edit-model; for a keyless run use --model mlab/demo")
