"""Draft: naive Bayes on word counts.

Counts every word of the reviews (the HTML line breaks removed) and fits a multinomial naive
Bayes classifier, the classic first model for text. Prints the accuracy on the starter's held-out
fifth of train.csv as "Validation score: N", then refits on every review and writes
submission.csv (id,label).
"""

import pandas as pd
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import MultinomialNB
from sklearn.pipeline import make_pipeline

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")


def clean(texts):
    return texts.str.replace(r"<br\s*/?>", " ", regex=True)


def build_model():
    return make_pipeline(CountVectorizer(), MultinomialNB())


fit_text, val_text, fit_label, val_label = train_test_split(
    clean(train["text"]), train["label"], test_size=0.2, random_state=1)
model = build_model().fit(fit_text, fit_label)
print(f"Validation score: {accuracy_score(val_label, model.predict(val_text)):.4f}")

model = build_model().fit(clean(train["text"]), train["label"])
submission = pd.DataFrame({"id": test["id"], "label": model.predict(clean(test["text"]))})
submission.to_csv("submission.csv", index=False)
print(f"Wrote submission.csv with {len(submission)} rows")
