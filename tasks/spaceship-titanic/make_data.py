"""Generate the lite data of the spaceship-titanic task: passenger records of a starliner.

The Kaggle competition "spaceship-titanic" asks which passengers of a damaged
spaceship were transported to another dimension.  This generator writes a
smaller table with the competition's columns and value formats:

  PassengerId  "gggg_pp": travel group number and place in the group
  HomePlanet   Earth, Europa or Mars
  CryoSleep    True/False: asleep for the whole voyage, confined to the cabin
  Cabin        "deck/num/side": deck A-G or T, cabin number, side P or S
  Destination  TRAPPIST-1e, 55 Cancri e or PSO J318.5-22
  Age          years
  VIP          True/False
  RoomService, FoodCourt, ShoppingMall, Spa, VRDeck   amounts spent on board
  Name         first and last name
  Transported  True/False, the answer

The outcome follows patterns of the kind found in the real data: sleepers and
children spend nothing and are transported more often; spending on room
service, the spa and the VR deck goes with staying, spending at the food court
and the mall with being transported; planet, deck, side, destination and the
cabin's position on its deck shift the odds; members of a travel group share
a planet, usually a cabin and a surname, and part of their fate.  About 2% of
each descriptive column is missing, as in the competition files.

Deterministic for a given seed.  Returns one table; the harness splits it into
train.csv, test.csv (without Transported) and the private answers.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd

N_GROUPS = 2200          # about 4,300 passengers
MISSING_RATE = 0.02
AMENITIES = ["RoomService", "FoodCourt", "ShoppingMall", "Spa", "VRDeck"]
PLANETS = ["Earth", "Europa", "Mars"]
PLANET_SHARE = [0.54, 0.25, 0.21]
DESTINATIONS = ["TRAPPIST-1e", "55 Cancri e", "PSO J318.5-22"]
DESTINATION_SHARE = {"Earth": [0.68, 0.18, 0.14], "Europa": [0.57, 0.42, 0.01], "Mars": [0.86, 0.11, 0.03]}
DECKS = {"Earth": (["E", "F", "G"], [0.15, 0.35, 0.50]),
         "Europa": (["A", "B", "C", "D", "E", "T"], [0.12, 0.37, 0.36, 0.08, 0.065, 0.005]),
         "Mars": (["D", "E", "F"], [0.2, 0.25, 0.55])}
SLEEP_RATE = {"Earth": 0.32, "Europa": 0.42, "Mars": 0.37}
# Median amount, when a passenger uses the amenity at all, per planet (Europans are wealthy).
SPEND_SCALE = {"Earth": [120, 150, 110, 100, 100], "Europa": [60, 1200, 60, 800, 850],
               "Mars": [600, 90, 450, 70, 60]}
# Effect of each amenity on the log-odds of being transported, per log-unit spent.
SPEND_EFFECT = np.array([-0.8, 0.35, 0.35, -0.75, -0.7])
DECK_EFFECT = {"A": -0.2, "B": 1.2, "C": 1.0, "D": -0.3, "E": -0.7, "F": 0.0, "G": 0.2, "T": -1.0}
PLANET_EFFECT = {"Earth": -0.35, "Europa": 0.45, "Mars": 0.0}
SHARPNESS = 1.25         # scales the whole log-odds: higher means less luck in the outcome
DESTINATION_EFFECT = {"TRAPPIST-1e": -0.1, "55 Cancri e": 0.35, "PSO J318.5-22": 0.0}

FIRST = ["Ada", "Alec", "Bria", "Cato", "Dara", "Elon", "Fenn", "Gwen", "Hale", "Iris", "Jory", "Kira",
         "Lael", "Mira", "Nash", "Orla", "Pike", "Quin", "Rhea", "Sol", "Tova", "Ulric", "Vega", "Wren",
         "Xan", "Yara", "Zeke", "Arlo", "Bex", "Cyra"]
LAST_SYLLABLES = ["ban", "cor", "del", "fen", "gra", "hol", "jen", "kas", "lor", "mar", "nor", "pel",
                  "ras", "sto", "tan", "vel", "wis", "yan"]


def _surname(rng: np.random.Generator) -> str:
    parts = rng.choice(LAST_SYLLABLES, size=rng.integers(2, 4))
    return "".join(parts).capitalize() + ("s" if rng.random() < 0.3 else "")


def _group_sizes(rng: np.random.Generator) -> np.ndarray:
    """Mostly solo travellers, some families of up to eight."""
    sizes = np.ones(N_GROUPS, dtype=int)
    grouped = rng.random(N_GROUPS) < 0.45
    sizes[grouped] = np.minimum(2 + rng.geometric(0.45, size=grouped.sum()) - 1, 8)
    return sizes


def _passengers(rng: np.random.Generator) -> pd.DataFrame:
    rows = []
    next_cabin: dict[tuple[str, str], int] = {}
    for group, size in enumerate(_group_sizes(rng), start=1):
        planet = PLANETS[rng.choice(3, p=PLANET_SHARE)]
        destination = DESTINATIONS[rng.choice(3, p=DESTINATION_SHARE[planet])]
        decks, deck_share = DECKS[planet]
        deck, side = decks[rng.choice(len(decks), p=deck_share)], "PS"[rng.integers(2)]
        key = (deck, side)
        cabin = next_cabin.get(key, 0)
        next_cabin[key] = cabin + 1 + (size > 4)
        surname, fate = _surname(rng), rng.normal(0.0, 0.6)   # the group's shared share of luck
        sleepy_group = rng.random() < SLEEP_RATE[planet]
        for place in range(1, size + 1):
            child = size > 1 and place > 1 and rng.random() < 0.35
            age = rng.integers(0, 13) if child else int(np.clip(rng.normal(31, 12), 13, 79))
            asleep = rng.random() < (0.75 if sleepy_group else 0.12)
            vip = age >= 18 and planet != "Earth" and rng.random() < 0.05
            spend = np.zeros(len(AMENITIES))
            if not asleep and age >= 13:
                used = rng.random(len(AMENITIES)) < 0.45
                amounts = np.array(SPEND_SCALE[planet]) * rng.lognormal(0.0, 1.0, size=len(AMENITIES))
                spend = np.where(used, np.round(amounts * (3 if vip else 1)), 0.0)
            own_destination = destination
            if rng.random() >= 0.85:   # a few members travel on to somewhere else
                own_destination = DESTINATIONS[rng.choice(3, p=DESTINATION_SHARE[planet])]
            last = surname if rng.random() < 0.85 else _surname(rng)
            rows.append({
                "PassengerId": f"{group:04d}_{place:02d}", "HomePlanet": planet, "CryoSleep": asleep,
                "Deck": deck, "CabinNum": cabin, "Side": side, "Destination": own_destination,
                "Age": float(age), "VIP": vip, **dict(zip(AMENITIES, spend)),
                "Name": f"{FIRST[rng.integers(len(FIRST))]} {last}", "fate": fate,
            })
    return pd.DataFrame(rows)


def _transported(df: pd.DataFrame, rng: np.random.Generator) -> np.ndarray:
    """Draw the outcome from a log-odds made of the effects described in the module docstring."""
    spend = np.log1p(df[AMENITIES].to_numpy()) @ SPEND_EFFECT
    # The deck's middle cabins fared better than its ends: a smooth, non-linear effect.
    position = 0.8 * np.sin(df["CabinNum"].to_numpy() / 110.0)
    logit = (-0.2 + 1.3 * df["CryoSleep"] + df["HomePlanet"].map(PLANET_EFFECT)
             + df["Deck"].map(DECK_EFFECT) + 0.6 * (df["Side"] == "S")
             + df["Destination"].map(DESTINATION_EFFECT) + 0.8 * (df["Age"] < 13)
             - 0.5 * df["VIP"] + spend + position + df["fate"])
    return rng.random(len(df)) < 1.0 / (1.0 + np.exp(-SHARPNESS * logit.to_numpy(dtype=float)))


def make(public_dir: pathlib.Path, private_dir: pathlib.Path, seed: int) -> pd.DataFrame:
    """The passenger table with the competition's columns, Transported last."""
    rng = np.random.default_rng(seed)
    df = _passengers(rng)
    df["Transported"] = _transported(df, rng)
    df["Cabin"] = df["Deck"] + "/" + df["CabinNum"].astype(str) + "/" + df["Side"]
    table = df[["PassengerId", "HomePlanet", "CryoSleep", "Cabin", "Destination", "Age", "VIP",
                *AMENITIES, "Name", "Transported"]].astype(object)
    # Blank out a few values per descriptive column, as in the competition files.
    for column in table.columns[1:-1]:
        table.loc[rng.random(len(table)) < MISSING_RATE, column] = None
    return table.astype({"Age": float, **{a: float for a in AMENITIES}, "Transported": bool})
