import pandas
print("baseline")
