"""Numbers across seeds, no sentences for readers: a member's record over its seeds, the tests
across seeds (Welch's t with the test set's sentence noise, the paired test, equivalence and
non-inferiority), Holm's adjustment and the claims decided by them. Imports nothing of the
report (an import-linter contract holds it)."""
