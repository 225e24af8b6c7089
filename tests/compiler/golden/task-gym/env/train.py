print("baseline: 1.0")
