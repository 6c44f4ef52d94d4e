"""Statistics: association scores, effect sizes, permutation tests, corrections."""
