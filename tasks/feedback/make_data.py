"""Generated learner essays for the feedback task's lite variant.

`make` returns one table shaped like the competition's train.csv (text_id, full_text,
cohesion, syntax, vocabulary, phraseology, grammar, conventions); the task's declared
split turns it into train.csv, test.csv and the private answers, as for the full variant.

Each generated writer has six correlated skills. A writer's scores are their skills
on the 1.0-5.0 scale (rounded to halves, with some rater noise), and the essay they write
shows the skills through measurable habits: linking words and paragraphing (cohesion),
joined or run-on sentences (syntax), plain or advanced words (vocabulary), natural or
awkward collocations (phraseology), agreement and tense slips (grammar), misspellings,
capitals and apostrophes (conventions). Better writers also tend to write more.
Sentences come from essay_bank.txt.
"""
from __future__ import annotations

import pathlib
import re

import numpy as np
import pandas as pd

SCORES = ("cohesion", "syntax", "vocabulary", "phraseology", "grammar", "conventions")
N_ESSAYS = 1000
BANK = pathlib.Path(__file__).with_name("essay_bank.txt")

TRANSITIONS = ("First,", "Second,", "Also,", "In addition,", "Furthermore,", "However,",
               "For example,", "Moreover,", "As a result,", "For instance,", "On top of that,")
JOINERS = ((", because ", True), (", which means that ", True), (", so ", True), (", although ", True),
           (" and ", False), (", ", False))
OPENERS = ("However", "On the other hand", "In the other hand", "For example")   # take no transition
COMMON_MISSPELLINGS = {"because": "becuase", "their": "there", "believe": "beleive", "friends": "freinds",
                       "different": "diffrent", "people": "peopel", "which": "wich", "really": "realy",
                       "until": "untill", "school": "scholl", "students": "studens", "experience":
                       "experiance", "important": "importent", "necessary": "neccesary", "a lot": "alot"}
MARKUP = {"vocabulary": re.compile(r"\{([^{}|]*)\|([^{}|]*)\}"),
          "phraseology": re.compile(r"<([^<>|]*)\|([^<>|]*)>"),
          "grammar": re.compile(r"\[([^\[\]|]*)\|([^\[\]|]*)\]")}


def read_bank(path: pathlib.Path = BANK) -> dict:
    """{topic: {"claim": str, "thesis": [...], "body": [...], "off": [...]}} from the bank file."""
    topics: dict = {}
    current = None
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("topic "):
            name, _, claim = line[len("topic "):].partition("|")
            current = topics.setdefault(name.strip(), {"claim": claim.strip(), "thesis": [], "body": [],
                                                       "off": []})
        else:
            kind, _, sentence = line.partition(":")
            current[kind.strip()].append(sentence.strip())
    return topics


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


class Writer:
    """One generated student: skills, the habits they imply, and the essay they write."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        general = rng.normal()
        self.skill = dict(zip(SCORES, 0.8 * general + 0.6 * rng.normal(size=len(SCORES))))
        habit = {name: value + rng.normal(scale=0.35) for name, value in self.skill.items()}
        self.p_transition = _sigmoid(1.6 * habit["cohesion"] - 0.3)
        self.p_off_topic = 0.25 * _sigmoid(-2.0 * habit["cohesion"] - 1.0)
        self.organised = habit["cohesion"] > -0.6
        self.p_join = _sigmoid(1.5 * habit["syntax"] - 0.6)
        self.p_run_on = _sigmoid(-1.8 * habit["syntax"] - 0.4)
        self.p_advanced = _sigmoid(1.8 * habit["vocabulary"])
        self.p_awkward = _sigmoid(-2.0 * habit["phraseology"] - 1.3)
        self.p_slip = _sigmoid(-2.0 * habit["grammar"] - 1.3)
        conventions = habit["conventions"]
        self.p_misspell = 0.12 * _sigmoid(-2.0 * conventions - 0.8)
        self.p_lower_i = _sigmoid(-2.5 * conventions - 1.5)
        self.p_no_capital = 0.5 * _sigmoid(-2.0 * conventions - 1.2)
        self.p_no_apostrophe = _sigmoid(-2.0 * conventions - 0.5)
        self.n_sentences = int(np.clip(round(13 + 4.0 * general + rng.normal(scale=3.0)), 5, 30))

    def scores(self) -> dict:
        """The six analytic scores, as raters would give them."""
        out = {}
        for name, value in self.skill.items():
            noisy = 3.1 + 0.6 * value + self.rng.normal(scale=0.25)
            out[name] = float(np.clip(np.round(noisy * 2) / 2, 1.0, 5.0))
        return out

    # -- sentence level ---------------------------------------------------
    def _resolve(self, sentence: str) -> str:
        rng = self.rng
        sentence = MARKUP["vocabulary"].sub(
            lambda m: m.group(2) if rng.random() < self.p_advanced else m.group(1), sentence)
        sentence = MARKUP["phraseology"].sub(
            lambda m: m.group(2) if rng.random() < self.p_awkward else m.group(1), sentence)
        return MARKUP["grammar"].sub(lambda m: m.group(2) if rng.random() < self.p_slip else m.group(1),
                                     sentence)

    def _misspell(self, word: str) -> str:
        rng = self.rng
        lower = word.lower()
        if lower in COMMON_MISSPELLINGS and rng.random() < 0.7:
            return COMMON_MISSPELLINGS[lower]
        letters = [i for i, c in enumerate(word) if c.isalpha()]
        if len(letters) < 4:
            return word
        i = letters[rng.integers(1, len(letters) - 1)]
        kind = rng.integers(3)
        if kind == 0:
            return word[:i] + word[i + 1] + word[i] + word[i + 2:]
        if kind == 1:
            return word[:i] + word[i + 1:]
        return word[:i] + word[i] + word[i:]

    def _conventions(self, sentence: str) -> str:
        rng = self.rng
        if rng.random() < self.p_misspell * 4:      # a chance per sentence for the two-word case
            sentence = sentence.replace("a lot", "alot")
        words = [self._misspell(w) if rng.random() < self.p_misspell else w for w in sentence.split(" ")]
        sentence = " ".join(words)
        if rng.random() < self.p_lower_i:
            sentence = re.sub(r"\bI\b", "i", sentence)
        if rng.random() < self.p_no_apostrophe:
            sentence = sentence.replace("n't", "nt").replace("'s", "s")
        if rng.random() < self.p_no_capital:
            sentence = sentence[:1].lower() + sentence[1:]
        return sentence

    def _link(self, sentences: list[str]) -> list[str]:
        """Join some neighbouring sentences into longer ones, well or badly."""
        rng = self.rng
        out: list[str] = []
        i = 0
        while i < len(sentences):
            current = sentences[i]
            if i + 1 < len(sentences):
                following = sentences[i + 1]
                tail = following[0].lower() + following[1:] if not following.startswith("I ") else following
                if rng.random() < self.p_join * 0.5:
                    joiner = [j for j, good in JOINERS if good][rng.integers(4)]
                    out.append(current.rstrip(".") + joiner + tail)
                    i += 2
                    continue
                if rng.random() < self.p_run_on * 0.5:
                    joiner = [j for j, good in JOINERS if not good][rng.integers(2)]
                    out.append(current.rstrip(".") + joiner + tail)
                    i += 2
                    continue
            out.append(current)
            i += 1
        return out

    # -- essay level ------------------------------------------------------
    def write(self, topic: dict, general: dict) -> str:
        rng = self.rng
        pool = topic["body"] + general["body"]
        n_body = min(self.n_sentences - 2, len(pool))
        body = [pool[j] for j in rng.choice(len(pool), size=n_body, replace=False)]
        for _ in range(rng.binomial(n_body, self.p_off_topic)):
            body.insert(rng.integers(len(body) + 1), general["off"][rng.integers(len(general["off"]))])
        thesis = topic["thesis"][rng.integers(len(topic["thesis"]))]
        closing = f"That is why I {{believe|am convinced}} that {topic['claim']}."

        body = [self._resolve(s) for s in body]
        body = self._link(body)
        linked = []
        for sentence in body:
            if rng.random() < self.p_transition and not sentence.startswith(OPENERS):
                transition = TRANSITIONS[rng.integers(len(TRANSITIONS))]
                start = sentence if sentence.startswith("I ") else sentence[0].lower() + sentence[1:]
                sentence = f"{transition} {start}"
            linked.append(sentence)
        intro = [self._resolve(thesis)]
        ending = [self._resolve(closing)]
        if rng.random() < self.p_transition:
            ending[0] = "In conclusion, t" + ending[0][1:]

        sentences = [self._conventions(s) for s in intro + linked + ending]
        n_intro, n_ending = len(intro), len(ending)
        if not self.organised:
            # one block of text, or line breaks in arbitrary places
            if rng.random() < 0.5:
                return " ".join(sentences)
            cuts = sorted(rng.choice(np.arange(1, len(sentences)), size=min(2, len(sentences) - 1),
                                     replace=False))
            return "\n\n".join(" ".join(sentences[a:b]) for a, b in zip([0, *cuts], [*cuts, len(sentences)]))
        middle = sentences[n_intro:len(sentences) - n_ending]
        n_paragraphs = max(1, min(3, len(middle) // 3))
        bounds = np.linspace(0, len(middle), n_paragraphs + 1).round().astype(int)
        paragraphs = [" ".join(sentences[:n_intro])]
        paragraphs += [" ".join(middle[a:b]) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
        paragraphs.append(" ".join(sentences[len(sentences) - n_ending:]))
        return "\n\n".join(paragraphs)


def generate_essays(seed: int, count: int = N_ESSAYS) -> pd.DataFrame:
    """text_id, full_text and the six scores of `count` generated essays."""
    rng = np.random.default_rng(seed)
    bank = read_bank()
    general = bank.pop("general")
    topics = list(bank.values())
    rows = []
    for _ in range(count):
        writer = Writer(rng)
        text = writer.write(topics[rng.integers(len(topics))], general)
        text_id = "".join(rng.choice(list("0123456789ABCDEF"), size=12))
        rows.append({"text_id": text_id, "full_text": text, **writer.scores()})
    return pd.DataFrame(rows)


def make(public_dir: pathlib.Path, private_dir: pathlib.Path, seed: int) -> pd.DataFrame:
    """Lite variant: one table of generated essays; the task's split makes train, test and answers."""
    return generate_essays(seed)
