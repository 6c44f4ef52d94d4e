"""The documented seed rule, written out independently of isoeat._random (for the tests' expected values).

The stream NAME of root seed S is ``numpy.random.SeedSequence(S, spawn_key=words)``, ``words`` the eight
little-endian 32-bit words of the SHA-256 of the name as a compact JSON array of strings (the manifest's
``seeds.rule``).
"""

import hashlib
import json
import struct

import numpy as np


def stream_seed(root: int, *name: str) -> int:
    text = json.dumps(list(name), ensure_ascii=False, separators=(",", ":"))
    words = struct.unpack("<8I", hashlib.sha256(text.encode("utf-8")).digest())
    return int(np.random.SeedSequence(root, spawn_key=words).generate_state(1)[0])
