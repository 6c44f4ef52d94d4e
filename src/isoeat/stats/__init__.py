"""Statistics: association scores, effect sizes, permutation tests, corrections.

``weat`` (WEAT, SC-WEAT), ``seat`` (SEAT), ``results`` (their result records),
``bootstrap`` (effect size, intervals), ``permutation``, ``multitest``. Nothing
here imports the model backends: models and calibrators come in as objects
(the Protocols of :mod:`isoeat._types`).
"""
