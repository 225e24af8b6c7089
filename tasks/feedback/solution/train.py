"""Score learner essays on six measures from what the text shows, not just its length.

The starter uses two length features. Each measure leaves traces in the text: linking
words and paragraphs (cohesion), long joined sentences (syntax), advanced words
(vocabulary), word combinations (phraseology), agreement slips (grammar), misspellings,
missing capitals and apostrophes (conventions). This script combines
  - TF-IDF of words and word pairs, which catches the words and collocations used,
  - TF-IDF of character 2-4-grams inside words, which catches misspellings,
  - a handful of counted habits (length, sentences, paragraphs, words per sentence,
    lower-case sentence starts, apostrophes, commas, share of long words),
and fits one ridge regression for all six measures. The ridge strength is chosen on the
same held-out fifth of train.csv that the starter uses; the predictions are clipped to
the 1.0-5.0 scale.
"""

import numpy as np
import pandas as pd
from scipy.sparse import csr_matrix, hstack
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import Ridge
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

MEASURES = ["cohesion", "syntax", "vocabulary", "phraseology", "grammar", "conventions"]


def mcrmse(actual, predicted):
    """Mean over the measures of each measure's root mean squared error."""
    return np.mean(np.sqrt(np.mean((np.asarray(actual) - np.asarray(predicted)) ** 2, axis=0)))


def habits(texts):
    words = texts.str.split().str.len().clip(lower=1)
    sentences = texts.str.count(r"[.!?](\s|$)").clip(lower=1)
    columns = {
        "log_words": np.log1p(words),
        "log_sentences": np.log1p(sentences),
        "paragraphs": np.log1p(texts.str.count(r"\n\s*\n")),
        "words_per_sentence": words / sentences,
        "lower_starts": texts.str.count(r"(?:^|[.!?]\s+)[a-z]") / sentences,
        "lower_i": texts.str.count(r"\bi\b") / words,
        "apostrophes": texts.str.count("'") / words,
        "commas": texts.str.count(",") / words,
        "long_words": texts.str.count(r"\b[A-Za-z]{8,}\b") / words,
    }
    return pd.DataFrame(columns).to_numpy(dtype=float)


class EssayFeatures:
    def fit(self, texts):
        self.words = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True).fit(texts)
        self.chars = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), min_df=3,
                                     sublinear_tf=True, lowercase=False).fit(texts)
        self.scale = StandardScaler().fit(habits(texts))
        return self

    def transform(self, texts):
        return hstack([self.words.transform(texts), self.chars.transform(texts),
                       csr_matrix(self.scale.transform(habits(texts)))]).tocsr()


def fit_predict(fit_texts, fit_scores, texts, alpha):
    features = EssayFeatures().fit(fit_texts)
    model = Ridge(alpha=alpha).fit(features.transform(fit_texts), fit_scores)
    return np.clip(model.predict(features.transform(texts)), 1.0, 5.0)


train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
y = train[MEASURES].to_numpy()

# The starter's hold-out: a fifth of train.csv, random_state=1.
t_fit, t_val, y_fit, y_val = train_test_split(train["full_text"], y, test_size=0.2, random_state=1)
scores = {}
for alpha in (0.3, 1.0, 3.0):
    scores[alpha] = mcrmse(y_val, fit_predict(t_fit, y_fit, t_val, alpha))
    print(f"alpha={alpha:g}: validation MCRMSE {scores[alpha]:.4f}")
best = min(scores, key=scores.get)
print(f"Validation MCRMSE: {scores[best]:.4f} (alpha={best:g})")
print(f"(predicting the training means instead: {mcrmse(y_val, np.tile(y_fit.mean(axis=0), (len(y_val), 1))):.4f})")

predictions = fit_predict(train["full_text"], y, test["full_text"], best)
submission = pd.DataFrame(predictions, columns=MEASURES)
submission.insert(0, "text_id", test["text_id"])
submission.to_csv("submission.csv", index=False)
print(f"Wrote submission.csv with {len(submission)} rows")
