print("baseline")
