"""`mlabc explain`: the long explanation of each diagnostic code, with a wrong and a right example."""
