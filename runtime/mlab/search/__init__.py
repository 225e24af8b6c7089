"""Tree search: the tree of candidate solutions, the policies that grow it, and the engine that runs them."""
