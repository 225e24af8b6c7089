"""Improved model: every column, encoded categoricals, gradient boosting on log(price).

Reads train.csv and test.csv, reports the validation MAE on the same held-out
quarter of train.csv that train.py uses, then refits on all of train.csv and
writes submission.csv (Id,SalePrice).
"""

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.metrics import mean_absolute_error
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OrdinalEncoder

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")


def add_features(df):
    df = df.drop(columns=["Id"]).copy()
    df["MSSubClass"] = df["MSSubClass"].astype(str)  # a dwelling code, not a quantity
    df["TotalSF"] = df["TotalBsmtSF"].fillna(0) + df["GrLivArea"]
    df["TotalBaths"] = (df["FullBath"] + 0.5 * df["HalfBath"]
                        + df["BsmtFullBath"].fillna(0) + 0.5 * df["BsmtHalfBath"].fillna(0))
    df["HouseAge"] = df["YrSold"] - df["YearBuilt"]
    df["SinceRemodel"] = df["YrSold"] - df["YearRemodAdd"]
    return df


X = add_features(train.drop(columns=["SalePrice"]))
y = np.log(train["SalePrice"])  # fit relative errors; exp() turns predictions back into dollars
X_test = add_features(test)

cat_cols = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
X[cat_cols] = X[cat_cols].astype(object)
X_test[cat_cols] = X_test[cat_cols].astype(object)


def build_model():
    encode = ColumnTransformer(
        [("cat", OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=np.nan), cat_cols)],
        remainder="passthrough",
    )
    booster = HistGradientBoostingRegressor(
        learning_rate=0.05, max_iter=600, max_leaf_nodes=15, min_samples_leaf=10,
        l2_regularization=1.0, categorical_features=list(range(len(cat_cols))),
        random_state=1,
    )
    return make_pipeline(encode, booster)


# Same held-out split as train.py, so the two scores can be compared.
X_fit, X_val, y_fit, y_val = train_test_split(X, y, test_size=0.25, random_state=1)
model = build_model().fit(X_fit, y_fit)
mae = mean_absolute_error(np.exp(y_val), np.exp(model.predict(X_val)))
print(f"Validation MAE: {mae:,.0f}")

# Refit on every training row and predict the test rows.
model = build_model().fit(X, y)
predictions = np.exp(model.predict(X_test))
submission = pd.DataFrame({"Id": test["Id"], "SalePrice": predictions})
submission.to_csv("submission.csv", index=False)
print(f"Wrote submission.csv with {len(submission)} rows")
