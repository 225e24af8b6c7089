import csv

train = list(csv.DictReader(open("train.csv")))
mean = sum(float(row["y"]) for row in train) / len(train)
test = list(csv.DictReader(open("test.csv")))
with open("submission.csv", "w", newline="") as out:
    writer = csv.writer(out)
    writer.writerow(["Id", "y"])
    for row in test:
        writer.writerow([row["Id"], 2 * float(row["x"]) + 1])
print(f"wrote {len(test)} predictions")
