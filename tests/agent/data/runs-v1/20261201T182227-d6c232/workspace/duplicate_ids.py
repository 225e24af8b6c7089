import csv

test = list(csv.DictReader(open("test.csv")))
with open("submission.csv", "w") as out:
    out.write("Id,y\n")
    for row in test + test[:1]:
        out.write(f"{row['Id']},1.0\n")
