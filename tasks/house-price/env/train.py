"""Starter script: predict house sale prices (a deliberately simple baseline).

Reads train.csv (with SalePrice) and test.csv (without it) from the current
directory, checks a small random forest on a held-out part of train.csv, then
refits on all of train.csv and writes submission.csv (Id,SalePrice).
Column meanings are in data_description.txt.
"""

import pandas as pd
from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import mean_absolute_error
from sklearn.model_selection import train_test_split

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")

# A handful of numeric columns; the many other columns are ignored for now.
features = [
    "LotArea",
    "YearBuilt",
    "1stFlrSF",
    "2ndFlrSF",
    "FullBath",
    "BedroomAbvGr",
    "TotRmsAbvGrd",
]
X = train[features]
y = train["SalePrice"]

# Hold out a quarter of the training rows to measure the model.
X_fit, X_val, y_fit, y_val = train_test_split(X, y, test_size=0.25, random_state=1)
model = RandomForestRegressor(n_estimators=50, random_state=1)
model.fit(X_fit, y_fit)
mae = mean_absolute_error(y_val, model.predict(X_val))
print(f"Validation MAE: {mae:,.0f}")

# Refit on every training row and predict the test rows.
model.fit(X, y)
predictions = model.predict(test[features])
submission = pd.DataFrame({"Id": test["Id"], "SalePrice": predictions})
submission.to_csv("submission.csv", index=False)
print(f"Wrote submission.csv with {len(submission)} rows")
