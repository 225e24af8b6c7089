"""The API keys of the common providers, checked before litellm is imported.

`mlab run` with a missing key should answer at once: litellm takes seconds to import, so the
providers most runs use are looked up here by their usual environment variable. A provider not
in the table is left to the model client's own check (through litellm), made afterwards.
"""
from __future__ import annotations

import os

from mlab.models.errors import MissingKey

# provider prefix of a litellm model name → the variables litellm reads its key from (any one)
PROVIDER_KEYS = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "gemini": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
}
TIER_OPTIONS = {"main": "--model", "fast": "--fast-model", "edit": "--edit-model"}


def known_provider(model: str) -> bool:
    return model.split("/")[0] in PROVIDER_KEYS


def check_known_keys(tiers: dict[str, str], environ=os.environ) -> None:
    """Raise MissingKey for the first model of a known provider whose key is not set; models
    of other providers (and offline ones) are not looked at."""
    by_model: dict[str, list[str]] = {}
    for tier, model in tiers.items():
        by_model.setdefault(model, []).append(tier)
    for model, used_by in by_model.items():
        variables = PROVIDER_KEYS.get(model.split("/")[0])
        if variables is None or any(environ.get(v, "").strip() for v in variables):
            continue
        owner = f"the {_listed(used_by, 'and')} tiers'" if len(used_by) > 1 else f"the {used_by[0]} tier's"
        choose = _listed([TIER_OPTIONS[t] for t in used_by], "or")
        raise MissingKey(f"{owner} model {model} needs {' or '.join(variables)} in the environment; set it or "
                         f"choose another model with {choose}; for a keyless run use --model mlab/demo")


def _listed(words: list[str], conjunction: str) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {conjunction} {words[-1]}"
