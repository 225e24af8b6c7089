"""The self-contained HTML pages of runs (`mlab view`) and their index."""
