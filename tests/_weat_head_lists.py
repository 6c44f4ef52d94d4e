"""W1..W10 exactly as committed before the test library (``src/isoeat/wordsets/data/weat.json`` at commit
2b0ba88, the transcription of Caliskan et al. 2017's supplement), copied here so that a change to a
built-in list fails ``tests/test_library.py``. Generated once with ``git show 2b0ba88:...weat.json``."""

from __future__ import annotations

# fmt: off
W_TESTS = {
    'W1': {
        "bias_type": 'Valence', "title": 'Flowers vs. insects / pleasant vs. unpleasant',
        "citation": 'Greenwald, A. G., McGhee, D. E., & Schwartz, J. L. K. (1998). Measuring individual differences in implicit cognition: The implicit association test. Journal of Personality and Social Psychology, 74(6), 1464-1480. https://doi.org/10.1037/0022-3514.74.6.1464',
        "provenance_sha256": '994da575ccc8bdff80dafffea81d19aa5e762728ff6c76c04c8bb459cfdbb81f',
        'X': ('Flowers', ('aster', 'clover', 'hyacinth', 'marigold', 'poppy', 'azalea', 'crocus', 'iris', 'orchid', 'rose', 'bluebell', 'daffodil', 'lilac', 'pansy', 'tulip', 'buttercup', 'daisy', 'lily', 'peony', 'violet', 'carnation', 'gladiola', 'magnolia', 'petunia', 'zinnia')),
        'Y': ('Insects', ('ant', 'caterpillar', 'flea', 'locust', 'spider', 'bedbug', 'centipede', 'fly', 'maggot', 'tarantula', 'bee', 'cockroach', 'gnat', 'mosquito', 'termite', 'beetle', 'cricket', 'hornet', 'moth', 'wasp', 'blackfly', 'dragonfly', 'horsefly', 'roach', 'weevil')),
        'A': ('Pleasant', ('caress', 'freedom', 'health', 'love', 'peace', 'cheer', 'friend', 'heaven', 'loyal', 'pleasure', 'diamond', 'gentle', 'honest', 'lucky', 'rainbow', 'diploma', 'gift', 'honor', 'miracle', 'sunrise', 'family', 'happy', 'laughter', 'paradise', 'vacation')),
        'B': ('Unpleasant', ('abuse', 'crash', 'filth', 'murder', 'sickness', 'accident', 'death', 'grief', 'poison', 'stink', 'assault', 'disaster', 'hatred', 'pollute', 'tragedy', 'divorce', 'jail', 'poverty', 'ugly', 'cancer', 'kill', 'rotten', 'vomit', 'agony', 'prison')),
    },
    'W2': {
        "bias_type": 'Valence', "title": 'Musical instruments vs. weapons / pleasant vs. unpleasant',
        "citation": 'Greenwald, A. G., McGhee, D. E., & Schwartz, J. L. K. (1998). Measuring individual differences in implicit cognition: The implicit association test. Journal of Personality and Social Psychology, 74(6), 1464-1480. https://doi.org/10.1037/0022-3514.74.6.1464',
        "provenance_sha256": '0039c24724c374e2a53c06e4436010291fadd0050a76539f51de7023e230ac85',
        'X': ('Instruments', ('bagpipe', 'cello', 'guitar', 'lute', 'trombone', 'banjo', 'clarinet', 'harmonica', 'mandolin', 'trumpet', 'bassoon', 'drum', 'harp', 'oboe', 'tuba', 'bell', 'fiddle', 'harpsichord', 'piano', 'viola', 'bongo', 'flute', 'horn', 'saxophone', 'violin')),
        'Y': ('Weapons', ('arrow', 'club', 'gun', 'missile', 'spear', 'axe', 'dagger', 'harpoon', 'pistol', 'sword', 'blade', 'dynamite', 'hatchet', 'rifle', 'tank', 'bomb', 'firearm', 'knife', 'shotgun', 'teargas', 'cannon', 'grenade', 'mace', 'slingshot', 'whip')),
        'A': ('Pleasant', ('caress', 'freedom', 'health', 'love', 'peace', 'cheer', 'friend', 'heaven', 'loyal', 'pleasure', 'diamond', 'gentle', 'honest', 'lucky', 'rainbow', 'diploma', 'gift', 'honor', 'miracle', 'sunrise', 'family', 'happy', 'laughter', 'paradise', 'vacation')),
        'B': ('Unpleasant', ('abuse', 'crash', 'filth', 'murder', 'sickness', 'accident', 'death', 'grief', 'poison', 'stink', 'assault', 'disaster', 'hatred', 'pollute', 'tragedy', 'divorce', 'jail', 'poverty', 'ugly', 'cancer', 'kill', 'rotten', 'vomit', 'agony', 'prison')),
    },
    'W3': {
        "bias_type": 'Race', "title": 'European-American vs. African-American names / pleasant vs. unpleasant',
        "citation": 'Greenwald, A. G., McGhee, D. E., & Schwartz, J. L. K. (1998). Measuring individual differences in implicit cognition: The implicit association test. Journal of Personality and Social Psychology, 74(6), 1464-1480. https://doi.org/10.1037/0022-3514.74.6.1464',
        "provenance_sha256": 'e95ddd8d6ff58aa6a2bbea84e87e4e70665ea33991e4193dc6cb0aa20e8799c6',
        'X': ('European-American names', ('Adam', 'Harry', 'Josh', 'Roger', 'Alan', 'Frank', 'Justin', 'Ryan', 'Andrew', 'Jack', 'Matthew', 'Stephen', 'Brad', 'Greg', 'Paul', 'Jonathan', 'Peter', 'Amanda', 'Courtney', 'Heather', 'Melanie', 'Katie', 'Betsy', 'Kristin', 'Nancy', 'Stephanie', 'Ellen', 'Lauren', 'Colleen', 'Emily', 'Megan', 'Rachel')),
        'Y': ('African-American names', ('Alonzo', 'Jamel', 'Theo', 'Alphonse', 'Jerome', 'Leroy', 'Torrance', 'Darnell', 'Lamar', 'Lionel', 'Tyree', 'Deion', 'Lamont', 'Malik', 'Terrence', 'Tyrone', 'Lavon', 'Marcellus', 'Wardell', 'Nichelle', 'Shereen', 'Ebony', 'Latisha', 'Shaniqua', 'Jasmine', 'Tanisha', 'Tia', 'Lakisha', 'Latoya', 'Yolanda', 'Malika', 'Yvette')),
        'A': ('Pleasant', ('caress', 'freedom', 'health', 'love', 'peace', 'cheer', 'friend', 'heaven', 'loyal', 'pleasure', 'diamond', 'gentle', 'honest', 'lucky', 'rainbow', 'diploma', 'gift', 'honor', 'miracle', 'sunrise', 'family', 'happy', 'laughter', 'paradise', 'vacation')),
        'B': ('Unpleasant', ('abuse', 'crash', 'filth', 'murder', 'sickness', 'accident', 'death', 'grief', 'poison', 'stink', 'assault', 'disaster', 'hatred', 'pollute', 'tragedy', 'bomb', 'divorce', 'jail', 'poverty', 'ugly', 'cancer', 'evil', 'kill', 'rotten', 'vomit')),
    },
    'W4': {
        "bias_type": 'Race', "title": 'European-American vs. African-American names (Bertrand & Mullainathan 2004) / pleasant vs. unpleasant',
        "citation": 'Target names: Bertrand, M., & Mullainathan, S. (2004). Are Emily and Greg more employable than Lakisha and Jamal? A field experiment on labor market discrimination. American Economic Review, 94(4), 991-1013. https://doi.org/10.1257/0002828042002561 Attributes (pleasant/unpleasant): Greenwald, A. G., McGhee, D. E., & Schwartz, J. L. K. (1998). Measuring individual differences in implicit cognition: The implicit association test. Journal of Personality and Social Psychology, 74(6), 1464-1480. https://doi.org/10.1037/0022-3514.74.6.1464',
        "provenance_sha256": '34a99437a7a123d1bc16d5a9fa13147f6a4faeb21206822236e7de1fc48c2fb2',
        'X': ('European-American names', ('Brad', 'Brendan', 'Geoffrey', 'Greg', 'Brett', 'Matthew', 'Neil', 'Todd', 'Allison', 'Anne', 'Carrie', 'Emily', 'Jill', 'Laurie', 'Meredith', 'Sarah')),
        'Y': ('African-American names', ('Darnell', 'Hakim', 'Jermaine', 'Kareem', 'Jamal', 'Leroy', 'Rasheed', 'Tyrone', 'Aisha', 'Ebony', 'Keisha', 'Kenya', 'Lakisha', 'Latoya', 'Tamika', 'Tanisha')),
        'A': ('Pleasant', ('caress', 'freedom', 'health', 'love', 'peace', 'cheer', 'friend', 'heaven', 'loyal', 'pleasure', 'diamond', 'gentle', 'honest', 'lucky', 'rainbow', 'diploma', 'gift', 'honor', 'miracle', 'sunrise', 'family', 'happy', 'laughter', 'paradise', 'vacation')),
        'B': ('Unpleasant', ('abuse', 'crash', 'filth', 'murder', 'sickness', 'accident', 'death', 'grief', 'poison', 'stink', 'assault', 'disaster', 'hatred', 'pollute', 'tragedy', 'bomb', 'divorce', 'jail', 'poverty', 'ugly', 'cancer', 'evil', 'kill', 'rotten', 'vomit')),
    },
    'W5': {
        "bias_type": 'Race', "title": 'European-American vs. African-American names (Bertrand & Mullainathan 2004) / pleasant vs. unpleasant (Nosek et al. 2002)',
        "citation": 'Target names: Bertrand, M., & Mullainathan, S. (2004). Are Emily and Greg more employable than Lakisha and Jamal? A field experiment on labor market discrimination. American Economic Review, 94(4), 991-1013. https://doi.org/10.1257/0002828042002561 Attributes (8 pleasant / 8 unpleasant): Nosek, B. A., Banaji, M. R., & Greenwald, A. G. (2002). Harvesting implicit group attitudes and beliefs from a demonstration web site. Group Dynamics: Theory, Research, and Practice, 6(1), 101-115. https://doi.org/10.1037/1089-2699.6.1.101',
        "provenance_sha256": 'b3bdb23b15f6314849659451cabd1581fd4baadbed2062c2af3d592f5de5c65b',
        'X': ('European-American names', ('Brad', 'Brendan', 'Geoffrey', 'Greg', 'Brett', 'Matthew', 'Neil', 'Todd', 'Allison', 'Anne', 'Carrie', 'Emily', 'Jill', 'Laurie', 'Meredith', 'Sarah')),
        'Y': ('African-American names', ('Darnell', 'Hakim', 'Jermaine', 'Kareem', 'Jamal', 'Leroy', 'Rasheed', 'Tyrone', 'Aisha', 'Ebony', 'Keisha', 'Kenya', 'Lakisha', 'Latoya', 'Tamika', 'Tanisha')),
        'A': ('Pleasant', ('joy', 'love', 'peace', 'wonderful', 'pleasure', 'friend', 'laughter', 'happy')),
        'B': ('Unpleasant', ('agony', 'terrible', 'horrible', 'nasty', 'evil', 'war', 'awful', 'failure')),
    },
    'W6': {
        "bias_type": 'Gender', "title": 'Male vs. female names / career vs. family',
        "citation": 'Nosek, B. A., Banaji, M. R., & Greenwald, A. G. (2002). Harvesting implicit group attitudes and beliefs from a demonstration web site. Group Dynamics: Theory, Research, and Practice, 6(1), 101-115. https://doi.org/10.1037/1089-2699.6.1.101',
        "provenance_sha256": 'ff773dabcf429d9fd6bee50601a697dc2fb996b7c1f48d4f72993b4d22c085f2',
        'X': ('Male names', ('John', 'Paul', 'Mike', 'Kevin', 'Steve', 'Greg', 'Jeff', 'Bill')),
        'Y': ('Female names', ('Amy', 'Joan', 'Lisa', 'Sarah', 'Diana', 'Kate', 'Ann', 'Donna')),
        'A': ('Career', ('executive', 'management', 'professional', 'corporation', 'salary', 'office', 'business', 'career')),
        'B': ('Family', ('home', 'parents', 'children', 'family', 'cousins', 'marriage', 'wedding', 'relatives')),
    },
    'W7': {
        "bias_type": 'Gender', "title": 'Math vs. arts / male vs. female terms',
        "citation": 'Nosek, B. A., Banaji, M. R., & Greenwald, A. G. (2002). Harvesting implicit group attitudes and beliefs from a demonstration web site. Group Dynamics: Theory, Research, and Practice, 6(1), 101-115. https://doi.org/10.1037/1089-2699.6.1.101',
        "provenance_sha256": '0ab4d85d08ad6de649383bd56246f9eb4e624844f48d29ae219c6024b31a360d',
        'X': ('Math', ('math', 'algebra', 'geometry', 'calculus', 'equations', 'computation', 'numbers', 'addition')),
        'Y': ('Arts', ('poetry', 'art', 'dance', 'literature', 'novel', 'symphony', 'drama', 'sculpture')),
        'A': ('Male terms', ('male', 'man', 'boy', 'brother', 'he', 'him', 'his', 'son')),
        'B': ('Female terms', ('female', 'woman', 'girl', 'sister', 'she', 'her', 'hers', 'daughter')),
    },
    'W8': {
        "bias_type": 'Gender', "title": 'Science vs. arts / male vs. female terms',
        "citation": 'Nosek, B. A., Banaji, M. R., & Greenwald, A. G. (2002). Math = male, me = female, therefore math != me. Journal of Personality and Social Psychology, 83(1), 44-59. https://doi.org/10.1037/0022-3514.83.1.44',
        "provenance_sha256": 'c846a9d9f43ec0bca7a7c4fcff49ec6cd1ce86f1d590f584ad0aac8ecfa48573',
        'X': ('Science', ('science', 'technology', 'physics', 'chemistry', 'Einstein', 'NASA', 'experiment', 'astronomy')),
        'Y': ('Arts', ('poetry', 'art', 'Shakespeare', 'dance', 'literature', 'novel', 'symphony', 'drama')),
        'A': ('Male terms', ('brother', 'father', 'uncle', 'grandfather', 'son', 'he', 'his', 'him')),
        'B': ('Female terms', ('sister', 'mother', 'aunt', 'grandmother', 'daughter', 'she', 'hers', 'her')),
    },
    'W9': {
        "bias_type": 'Health', "title": 'Mental vs. physical disease / temporary vs. permanent',
        "citation": 'Monteith, L. L., & Pettit, J. W. (2011). Implicit and explicit stigmatizing attitudes and stereotypes about depression. Journal of Social and Clinical Psychology, 30(5), 484-505. https://doi.org/10.1521/jscp.2011.30.5.484',
        "provenance_sha256": '57cb89952ca8ff15f880d84116f1dbbddbb1f5fd47106fa9fe0eb1b85b0a77b6',
        'X': ('Mental disease', ('sad', 'hopeless', 'gloomy', 'tearful', 'miserable', 'depressed')),
        'Y': ('Physical disease', ('sick', 'illness', 'influenza', 'disease', 'virus', 'cancer')),
        'A': ('Temporary', ('impermanent', 'unstable', 'variable', 'fleeting', 'short-term', 'brief', 'occasional')),
        'B': ('Permanent', ('stable', 'always', 'constant', 'persistent', 'chronic', 'prolonged', 'forever')),
    },
    'W10': {
        "bias_type": 'Age', "title": "Young vs. old people's names / pleasant vs. unpleasant",
        "citation": 'Nosek, B. A., Banaji, M. R., & Greenwald, A. G. (2002). Harvesting implicit group attitudes and beliefs from a demonstration web site. Group Dynamics: Theory, Research, and Practice, 6(1), 101-115. https://doi.org/10.1037/1089-2699.6.1.101',
        "provenance_sha256": '2d03891bda4e1308e4f95bbcca90268918225c03a7cb6796d3d330ade1d2821d',
        'X': ("Young people's names", ('Tiffany', 'Michelle', 'Cindy', 'Kristy', 'Brad', 'Eric', 'Joey', 'Billy')),
        'Y': ("Old people's names", ('Ethel', 'Bernice', 'Gertrude', 'Agnes', 'Cecil', 'Wilbert', 'Mortimer', 'Edgar')),
        'A': ('Pleasant', ('joy', 'love', 'peace', 'wonderful', 'pleasure', 'friend', 'laughter', 'happy')),
        'B': ('Unpleasant', ('agony', 'terrible', 'horrible', 'nasty', 'evil', 'war', 'awful', 'failure')),
    },
}
# fmt: on
