"""Task data: prepare a variant once into the cache (local files, generators, remote sources), split it, install it into runs."""
