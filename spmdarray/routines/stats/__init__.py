"""Statistics: NaN-aware reductions, averages, order statistics and histograms."""
