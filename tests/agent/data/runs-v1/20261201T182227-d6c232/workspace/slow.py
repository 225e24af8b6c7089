import time

time.sleep(1)
print("slept one second")
