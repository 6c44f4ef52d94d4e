"""A 12-sentence corpus for contextual runs: it mentions 7 of W6's 32 words (John, Amy, office, executive, salary,
family, wedding), leaving 25 of 32 (78.1%) without a context — far over the 10% template-fallback gate."""

W6_SENTENCES = [
    "John went to the office early in the morning to work on the report for his manager.",
    "Amy walked to the market to buy fresh bread and cheese for the family dinner tonight.",
    "The executive signed the salary agreement after a long meeting with the whole board.",
    "Their wedding was held in the garden behind the old house near the quiet river.",
] * 3
