import pandas as pd
print(len(pd.read_csv("train.csv")))
