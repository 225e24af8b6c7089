"""Generate the lite data of the imdb task: short movie reviews labelled positive or negative.

The real task classifies IMDb reviews (text, label 1 = positive, 0 = negative).
The lite variant keeps that table shape but writes its own reviews from word
lists.  Each review has a hidden sentiment; it is built from

* opinion sentences about one aspect of the film (acting, plot, music, ...),
  each agreeing with the review's sentiment only most of the time;
* negated opinions ("the plot was not dull") whose adjective points the
  other way, so single words mislead and word pairs matter;
* mixed sentences ("the music was lovely, but the pacing was sluggish");
* neutral plot summary and viewing circumstances that carry no sentiment;
* sometimes an overall verdict and a mark out of ten, as real reviews have.

Rare adjectives are used on purpose, so a model that keeps only the most
frequent words misses part of the signal.  Deterministic for a given seed.

The function returns one table (columns id, text, label); the harness splits
it into train.csv, test.csv (no label) and the private answers.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd

N_REVIEWS = 2500
OPINION_AGREES = 0.72    # chance that an opinion sentence shares the review's sentiment
VERDICT_AGREES = 0.9     # chance that the overall verdict does
NEGATION_RATE = 0.35     # chance that an opinion is phrased as "not <opposite>"

ASPECTS = ["acting", "plot", "script", "dialogue", "direction", "music", "score", "soundtrack",
           "cinematography", "camera work", "pacing", "editing", "ending", "cast", "story",
           "lead performance", "villain", "effects work", "humour", "set design"]

# Common words first: the sampler favours the start of each list (Zipf-like), so the
# later ones are rare and only a model with a large vocabulary sees them.
POSITIVE = ["good", "great", "excellent", "wonderful", "brilliant", "enjoyable", "superb", "fun",
            "beautiful", "moving", "clever", "gripping", "charming", "strong", "memorable",
            "touching", "stunning", "delightful", "impressive", "engaging", "fresh", "witty",
            "riveting", "masterful", "luminous", "exhilarating", "poignant", "inventive",
            "sublime", "heartfelt", "mesmerizing", "assured", "nuanced", "rousing", "sparkling"]
NEGATIVE = ["bad", "boring", "awful", "terrible", "weak", "dull", "poor", "stupid", "forgettable",
            "predictable", "bland", "clumsy", "silly", "messy", "tedious", "annoying", "flat",
            "lifeless", "painful", "cheap", "tiresome", "laughable", "incoherent", "sluggish",
            "wooden", "insipid", "grating", "leaden", "hackneyed", "turgid", "vapid", "shoddy",
            "plodding", "derivative", "overwrought"]
ADVERBS = ["", "", "", "really ", "very ", "quite ", "truly ", "rather ", "pretty ", "so ",
           "genuinely ", "surprisingly ", "somewhat "]

OPINION_TEMPLATES = [
    "The {aspect} was {adv}{adj}.",
    "I thought the {aspect} was {adv}{adj}.",
    "The {aspect} is {adv}{adj}.",
    "I found the {aspect} {adv}{adj}.",
    "What a {adj} {aspect}.",
    "Honestly, the {aspect} felt {adv}{adj}.",
    "The {aspect} turned out {adv}{adj}.",
]
NEGATED_TEMPLATES = [
    "The {aspect} was not {adj}.",
    "The {aspect} wasn't {adj} at all.",
    "I would not call the {aspect} {adj}.",
    "The {aspect} is never {adj}.",
    "I didn't find the {aspect} {adj}.",
    "Nobody could say the {aspect} was {adj}.",
]
VERDICTS_POSITIVE = ["Overall, a {adj} film.", "I would recommend it to anyone.",
                     "Definitely worth watching.", "I will watch it again.",
                     "One of the better films this year.", "A {adj} way to spend an evening."]
VERDICTS_NEGATIVE = ["Overall, a {adj} film.", "I would not recommend it.", "Skip this one.",
                     "What a waste of time.", "I want those two hours back.",
                     "A {adj} way to spend an evening."]
VERDICTS_NEGATED = ["Overall, not a {adj} film.", "In the end it was not {adj} at all."]

FIRST_NAMES = ["Anna", "Ben", "Clara", "David", "Elena", "Frank", "Grace", "Henry", "Ines", "Jack",
               "Kate", "Leo", "Maria", "Nick", "Olga", "Paul", "Rosa", "Sam", "Tara", "Victor"]
LAST_NAMES = ["Adams", "Baker", "Costa", "Duval", "Evans", "Fischer", "Garcia", "Hughes", "Ito",
              "Jensen", "Klein", "Lopez", "Moreau", "Novak", "Olsen", "Price", "Rossi", "Stone"]
ROLES = ["detective", "teacher", "pilot", "young widow", "retired boxer", "journalist", "nurse",
         "farmer", "con artist", "scientist", "soldier", "chef", "lawyer", "musician", "thief"]
EVENTS = ["returns to a small town", "investigates a string of robberies", "falls in love",
          "tries to save the family farm", "is chased across the desert", "inherits a hotel",
          "plans one last heist", "searches for a missing sister", "joins a travelling circus",
          "gets stuck on a space station", "runs for mayor", "fights an old rival"]
PLACES = ["Paris", "Chicago", "a fishing village", "the Scottish highlands", "Tokyo", "Texas",
          "a submarine", "a boarding school", "Rome", "the Arctic", "New Orleans", "a casino"]
FILLER_TEMPLATES = [
    "{first} {last} plays a {role} who {event} in {place}.",
    "The film follows a {role} who {event}.",
    "It is set in {place} during the {decade}s.",
    "I saw it {when}.",
    "It runs for about {minutes} minutes.",
    "{first} {last} also directed it.",
    "The story starts when a {role} {event}.",
    "Most of it was shot in {place}.",
    "It came out in {year}.",
    "I went in knowing nothing about it.",
]
WHEN = ["at a festival", "on a plane", "last weekend", "with my family", "on television",
        "at the cinema", "on a rainy Sunday", "with friends", "years ago"]


def _zipf_pick(words: list[str], rng: np.random.Generator) -> str:
    """Pick a word, favouring the front of the list (weight 1/(rank+1))."""
    weights = 1.0 / np.arange(1, len(words) + 1)
    return words[rng.choice(len(words), p=weights / weights.sum())]


def _pick(options: list[str], rng: np.random.Generator) -> str:
    return options[rng.integers(len(options))]


def _adjective(positive: bool, rng: np.random.Generator) -> str:
    return _zipf_pick(POSITIVE if positive else NEGATIVE, rng)


def _opinion(positive: bool, rng: np.random.Generator) -> str:
    """A sentence about one aspect expressing the given sentiment, sometimes by negation."""
    aspect = _pick(ASPECTS, rng)
    if rng.random() < NEGATION_RATE:
        return _pick(NEGATED_TEMPLATES, rng).format(aspect=aspect, adj=_adjective(not positive, rng))
    return _pick(OPINION_TEMPLATES, rng).format(aspect=aspect, adj=_adjective(positive, rng),
                                                adv=_pick(ADVERBS, rng))


def _mixed(positive: bool, rng: np.random.Generator) -> str:
    """'<opposite clause>, but <clause with the given sentiment>': the second half counts."""
    first = _opinion(not positive, rng).rstrip(".")
    second = _opinion(positive, rng).rstrip(".")
    return f"{first}, but {second[0].lower()}{second[1:]}."


def _filler(rng: np.random.Generator) -> str:
    return _pick(FILLER_TEMPLATES, rng).format(
        first=_pick(FIRST_NAMES, rng), last=_pick(LAST_NAMES, rng), role=_pick(ROLES, rng),
        event=_pick(EVENTS, rng), place=_pick(PLACES, rng), when=_pick(WHEN, rng),
        decade=rng.integers(192, 202) * 10, minutes=rng.integers(80, 181), year=rng.integers(1950, 2024))


def _verdict(positive: bool, rng: np.random.Generator) -> str:
    if rng.random() < NEGATION_RATE / 2:
        return _pick(VERDICTS_NEGATED, rng).format(adj=_adjective(not positive, rng))
    templates = VERDICTS_POSITIVE if positive else VERDICTS_NEGATIVE
    return _pick(templates, rng).format(adj=_adjective(positive, rng))


def review(positive: bool, rng: np.random.Generator) -> str:
    """One review whose hidden sentiment is `positive`."""
    sentences = [_filler(rng) for _ in range(rng.integers(1, 4))]
    for _ in range(rng.integers(2, 6)):
        agrees = rng.random() < OPINION_AGREES
        sentence_positive = positive if agrees else not positive
        sentences.append(_mixed(sentence_positive, rng) if rng.random() < 0.2
                         else _opinion(sentence_positive, rng))
    order = rng.permutation(len(sentences))
    sentences = [sentences[i] for i in order]
    if rng.random() < 0.6:
        sentences.append(_verdict(positive if rng.random() < VERDICT_AGREES else not positive, rng))
    if rng.random() < 0.25:
        mark = rng.integers(7, 11) if positive else rng.integers(1, 5)
        sentences.append(f"{mark}/10.")
    paragraphs, current = [], []
    for sentence in sentences:
        current.append(sentence)
        if rng.random() < 0.15:   # IMDb reviews keep their HTML line breaks
            paragraphs.append(" ".join(current))
            current = []
    if current:
        paragraphs.append(" ".join(current))
    return "<br /><br />".join(paragraphs)


def make(public_dir: pathlib.Path, private_dir: pathlib.Path, seed: int, sample: int | None = None) -> pd.DataFrame:
    """The whole corpus as one table: id, text, label (1 = positive, 0 = negative); `sample`
    (mlabc check asks for one): that many reviews, written the same way."""
    count = N_REVIEWS if sample is None else min(N_REVIEWS, sample)
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(count) % 2)   # exactly balanced, as IMDb is
    texts = [review(bool(label), rng) for label in labels]
    return pd.DataFrame({"id": np.arange(count), "text": texts, "label": labels.astype(np.int64)})
