for i in range(100):
    print(f"row {i}: " + "x" * 60)
