"""litellm's table lookups fall back only for the errors that mean "not in the table"; a bug shows."""
import pytest

from mlab.models import client


def _raising(error):
    def lookup(*args, **kwargs):
        raise error
    return lookup


def test_a_model_missing_from_the_caching_table_is_sent_unmarked(monkeypatch):
    litellm = client.import_litellm()
    missing = litellm.exceptions.ModelNotMappedError("This model isn't mapped yet")
    monkeypatch.setattr(litellm.utils, "supports_prompt_caching", _raising(missing))
    messages = [{"role": "system", "content": "stable start"}, {"role": "user", "content": "question"}]
    assert client.split_prefix(messages, "stable start", "openai/some-new-model") == messages


def test_any_other_failure_of_the_lookup_is_not_hidden(monkeypatch):
    litellm = client.import_litellm()
    monkeypatch.setattr(litellm.utils, "supports_prompt_caching", _raising(RuntimeError("a bug in the lookup")))
    with pytest.raises(RuntimeError, match="a bug in the lookup"):
        client.split_prefix([{"role": "user", "content": "q"}], "q", "openai/some-new-model")
