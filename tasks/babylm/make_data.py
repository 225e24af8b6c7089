"""Generate the babylm lite corpus: child-directed speech from a small probabilistic grammar.

The corpus is a stream of short conversations between a parent (*MOT:) and a child
(*CHI:), one utterance per line, in lower case with punctuation as separate tokens. Each
conversation keeps to a few topics (a person, a toy, an animal), so context helps: nouns
recur, pronouns agree with the person talked about (he / she), a/an and is/are agree
with their noun, animal sounds follow "what does the ... say ?", counting runs in order,
and the child tends to answer the question just asked.

Files: public train.txt (~200 KB), dev.txt (~20 KB) and vocab.txt (every token the
grammar can produce, one per line; line number = token id; "<eos>" marks a line end);
private test.txt (~20 KB, a fresh draw from the same grammar) and a copy of vocab.txt,
so scoring never relies on files the agent's workspace holds.

`make_full` writes the same files from the BabyLM strict-small corpus (10M words, 2023
edition) on Hugging Face, with a vocabulary of its most frequent words plus "<unk>" for
the rest. It needs `datasets` (a version that still runs dataset loading scripts, < 4.0)
on the machine that prepares the data.
"""
from __future__ import annotations

import collections
import pathlib
import random

EOS = "<eos>"
UNKNOWN = "<unk>"
FULL_DATASET = ("cambridge-climb/BabyLM", "strict_small")
FULL_VOCAB_SIZE = 16_000
PEOPLE = {"mommy": "she", "daddy": "he", "grandma": "she", "grandpa": "he", "emma": "she",
          "lily": "she", "max": "he", "sam": "he", "nana": "she", "ben": "he"}
ANIMALS = {"dog": "woof", "cat": "meow", "cow": "moo", "duck": "quack", "sheep": "baa",
           "pig": "oink", "horse": "neigh", "owl": "hoot", "bird": "tweet", "frog": "ribbit",
           "lion": "roar", "elephant": "toot"}
TOYS = ["ball", "car", "truck", "block", "book", "cup", "spoon", "shoe", "sock", "hat",
        "train", "boat", "apple", "banana", "cookie", "egg", "orange", "drum", "doll", "bus"]
PLURAL = {"sheep": "sheep", "bus": "buses", "fish": "fish"}
ADJECTIVES = ["big", "little", "red", "blue", "yellow", "green", "soft", "dirty", "happy",
              "sleepy", "funny", "round", "orange", "old", "new", "wet", "hot", "pretty"]
PLACES = ["on the table", "in the box", "under the bed", "in the bath", "on the floor",
          "in the garden", "behind the door", "in the car", "on the chair", "in the kitchen"]
TRANSITIVE = [("throw", "throws", "throwing"), ("catch", "catches", "catching"),
              ("push", "pushes", "pushing"), ("hold", "holds", "holding"), ("find", "finds", "finding"),
              ("wash", "washes", "washing"), ("kick", "kicks", "kicking"), ("hug", "hugs", "hugging"),
              ("eat", "eats", "eating"), ("read", "reads", "reading")]
INTRANSITIVE = [("sleep", "sleeps", "sleeping"), ("jump", "jumps", "jumping"), ("run", "runs", "running"),
                ("sit", "sits", "sitting"), ("play", "plays", "playing"), ("sing", "sings", "singing"),
                ("swim", "swims", "swimming"), ("dance", "dances", "dancing")]
NUMBERS = ["one", "two", "three", "four", "five", "six"]
FILLERS = ["yes !", "good job !", "uh oh !", "oh no !", "okay .", "all done !", "wow !",
           "that 's right !", "well done !", "silly !", "thank you !", "here you go ."]
CHILD_FILLERS = ["no !", "yes", "more", "mine !", "uh oh", "again !", "up !", "all gone"]
PUNCTUATION = [".", "!", "?", ",", "'s", "*MOT:", "*CHI:"]
FUNCTION_WORDS = ["a", "an", "the", "is", "are", "do", "does", "you", "want", "where", "look",
                  "at", "that", "what", "say", "says", "can", "let", "put", "it", "likes", "has",
                  "bye", "gone", "more", "please", "they", "too", "very", "to"]


def plural(noun: str) -> str:
    return PLURAL.get(noun, noun + "s")


def article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


class Conversation:
    """One conversation: its topics, and the utterances drawn so far."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.person = rng.choice(list(PEOPLE))
        self.animal = rng.choice(list(ANIMALS))
        self.toys = rng.sample(TOYS, 2)
        self.lines: list[str] = []

    def noun(self) -> str:
        """A noun, usually one of the conversation's topics."""
        roll = self.rng.random()
        if roll < 0.45:
            return self.toys[0]
        if roll < 0.6:
            return self.toys[1]
        if roll < 0.8:
            return self.animal
        return self.rng.choice(TOYS + list(ANIMALS))

    def noun_phrase(self, noun: str, many: bool = False, depth: int = 0) -> str:
        """`the (adjective) noun(s) (place)`, with a place phrase nested now and then."""
        words = ["the"]
        if self.rng.random() < 0.3:
            words.append(self.rng.choice(ADJECTIVES))
        words.append(plural(noun) if many else noun)
        if depth == 0 and self.rng.random() < 0.15:
            words.append(self.rng.choice(PLACES))
        return " ".join(words)

    def say(self, text: str, child: bool = False) -> None:
        self.lines.append(("*CHI: " if child else "*MOT: ") + text)

    def child_echo(self, noun: str) -> None:
        """The child often answers with the word just heard."""
        roll = self.rng.random()
        if roll < 0.45:
            self.say(f"{noun} !", child=True)
        elif roll < 0.6:
            self.say(self.rng.choice(CHILD_FILLERS), child=True)

    # -- utterance kinds -------------------------------------------------------------
    def look_at(self):
        noun = self.noun()
        adjective = self.rng.choice(ADJECTIVES) + " " if self.rng.random() < 0.4 else ""
        self.say(f"look at the {adjective}{noun} !")
        self.child_echo(noun)

    def want(self):
        noun = self.noun()
        self.say(f"do you want the {noun} ?")
        self.say(self.rng.choice([f"{noun} please", "yes", "no !", f"more {noun}"]), child=True)

    def where(self):
        noun, many = self.noun(), self.rng.random() < 0.3
        if many:
            self.say(f"where are the {plural(noun)} ?")
        else:
            self.say(f"where is the {noun} ?")
        place = self.rng.choice(PLACES)
        if self.rng.random() < 0.5:
            self.say(f"{'they' if many else 'it'} {'are' if many else 'is'} {place} .", child=self.rng.random() < 0.3)
        else:
            self.say(f"{noun} gone", child=True)

    def describe(self):
        noun, many = self.noun(), self.rng.random() < 0.3
        verb = "are" if many else "is"
        self.say(f"{self.noun_phrase(noun, many)} {verb} {'very ' if self.rng.random() < 0.2 else ''}"
                 f"{self.rng.choice(ADJECTIVES)} .")

    def animal_does(self):
        base, third, ing = self.rng.choice(INTRANSITIVE)
        self.say(f"the {self.animal} is {ing} .")
        if self.rng.random() < 0.4:
            self.say(f"{self.animal} {base} !", child=True)

    def that_is(self):
        noun = self.noun()
        if self.rng.random() < 0.5:
            adjective = self.rng.choice(ADJECTIVES)
            self.say(f"that 's {article(adjective)} {adjective} {noun} .")
        else:
            self.say(f"that 's {article(noun)} {noun} .")
        self.child_echo(noun)

    def animal_sound(self):
        sound = ANIMALS[self.animal]
        self.say(f"what does the {self.animal} say ?")
        if self.rng.random() < 0.75:
            self.say(f"{sound} {sound} !" if self.rng.random() < 0.5 else f"{sound} !", child=True)
            self.say(f"yes , the {self.animal} says {sound} !")
        else:
            self.say(f"the {self.animal} says {sound} .")

    def person_does(self):
        pronoun = PEOPLE[self.person]
        if self.rng.random() < 0.6:
            base, third, ing = self.rng.choice(TRANSITIVE)
            noun = self.noun()
            self.say(f"{self.person} {'is ' + ing if self.rng.random() < 0.6 else third} the {noun} .")
            if self.rng.random() < 0.6:
                self.say(f"{pronoun} likes the {noun} .")
        else:
            base, third, ing = self.rng.choice(INTRANSITIVE)
            self.say(f"{self.person} {third} .")
            if self.rng.random() < 0.5:
                self.say(f"can you {base} too ?")
                self.say(self.rng.choice(["yes", "no !", f"{base} !"]), child=True)

    def possession(self):
        noun = self.noun()
        pronoun = PEOPLE[self.person]
        self.say(f"{self.person} has {article(noun)} {noun} .")
        if self.rng.random() < 0.5:
            self.say(f"{pronoun} likes it .")

    def ask_action(self):
        base, _, _ = self.rng.choice(TRANSITIVE)
        noun = self.noun()
        opening = self.rng.choice(["can you", "do you want to", "let 's"])
        mark = "." if opening.startswith("let") else "?"
        self.say(f"{opening} {base} the {noun} {mark}")
        self.child_echo(noun)

    def count(self):
        noun = self.noun()
        upto = self.rng.randint(2, len(NUMBERS))
        self.say(" , ".join(NUMBERS[:upto]) + " !")
        self.say(f"{NUMBERS[upto - 1]} {plural(noun)} !")

    def put(self):
        noun = self.noun()
        self.say(f"put the {noun} {self.rng.choice(PLACES)} .")
        if self.rng.random() < 0.4:
            self.say(self.rng.choice(FILLERS))

    def filler(self):
        self.say(self.rng.choice(FILLERS))

    def draw(self) -> list[str]:
        kinds = [(self.look_at, 3), (self.want, 2), (self.where, 2), (self.describe, 3),
                 (self.that_is, 2), (self.animal_sound, 1.5), (self.person_does, 3),
                 (self.animal_does, 1), (self.possession, 1), (self.ask_action, 2), (self.count, 1),
                 (self.put, 1.5),
                 (self.filler, 1.5)]
        functions, weights = zip(*kinds)
        for _ in range(self.rng.randint(4, 9)):
            self.rng.choices(functions, weights)[0]()
        if self.rng.random() < 0.3:
            self.say(f"bye bye {self.toys[0]} !")
        return self.lines


def corpus(rng: random.Random, target_chars: int) -> str:
    """Whole conversations until the text reaches `target_chars` characters."""
    lines, size = [], 0
    while size < target_chars:
        for line in Conversation(rng).draw():
            lines.append(line)
            size += len(line) + 1
    return "\n".join(lines) + "\n"


def vocabulary() -> list[str]:
    """Every token the grammar can produce, "<eos>" first, then sorted."""
    words = set(PUNCTUATION) | set(FUNCTION_WORDS) | set(PEOPLE) | set(PEOPLE.values())
    words |= set(ANIMALS) | set(ANIMALS.values()) | set(ADJECTIVES) | set(NUMBERS)
    words |= set(TOYS) | {plural(n) for n in TOYS + list(ANIMALS)}
    words |= {w for forms in TRANSITIVE + INTRANSITIVE for w in forms}
    words |= {w for phrase in PLACES + FILLERS + CHILD_FILLERS for w in phrase.split()}
    return [EOS] + sorted(words)


def write_files(public_dir: pathlib.Path, private_dir: pathlib.Path, texts: dict[str, str], vocab: list[str]) -> None:
    """train.txt, dev.txt, vocab.txt into public_dir; test.txt and vocab.txt into private_dir."""
    public_dir, private_dir = pathlib.Path(public_dir), pathlib.Path(private_dir)
    public_dir.mkdir(parents=True, exist_ok=True)
    private_dir.mkdir(parents=True, exist_ok=True)
    vocab_text = "\n".join(vocab) + "\n"
    for name in ("train.txt", "dev.txt"):
        (public_dir / name).write_text(texts[name], encoding="utf-8")
    (public_dir / "vocab.txt").write_text(vocab_text, encoding="utf-8")
    (private_dir / "test.txt").write_text(texts["test.txt"], encoding="utf-8")
    (private_dir / "vocab.txt").write_text(vocab_text, encoding="utf-8")


def make(public_dir: pathlib.Path, private_dir: pathlib.Path, seed: int) -> None:
    """Lite variant: ~200 KB of training text, ~20 KB each of dev and (private) test text."""
    texts = {"train.txt": corpus(random.Random(f"{seed}-train"), 200_000),
             "dev.txt": corpus(random.Random(f"{seed}-dev"), 20_000),
             "test.txt": corpus(random.Random(f"{seed}-test"), 20_000)}
    vocab = vocabulary()
    known = set(vocab)
    for name, text in texts.items():
        unknown = {token for token in text.split() if token not in known}
        if unknown:  # a grammar edit that forgot the vocabulary must fail here, not at scoring
            raise RuntimeError(f"{name} uses tokens missing from the vocabulary: {sorted(unknown)[:10]}")
    write_files(public_dir, private_dir, texts, vocab)


def make_full(public_dir: pathlib.Path, private_dir: pathlib.Path, seed: int) -> None:
    """Full variant: BabyLM strict-small train / validation / test as train.txt, dev.txt, test.txt."""
    try:
        from datasets import load_dataset
    except ImportError:
        raise RuntimeError("the full babylm data comes from Hugging Face: pip install 'datasets<4' "
                           "on the machine that prepares it") from None
    corpus_splits = load_dataset(*FULL_DATASET, trust_remote_code=True)
    texts = {}
    for split, name in (("train", "train.txt"), ("validation", "dev.txt"), ("test", "test.txt")):
        lines = (" ".join(row["text"].split()) for row in corpus_splits[split])
        texts[name] = "\n".join(line for line in lines if line) + "\n"
    counts = collections.Counter(texts["train.txt"].split())
    frequent = sorted(word for word, _ in counts.most_common(FULL_VOCAB_SIZE))
    write_files(public_dir, private_dir, texts, [EOS, UNKNOWN] + frequent)
