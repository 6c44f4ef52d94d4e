"""The documented seed rule, written out independently of isoeat._random (for the tests' expected values).

The stream NAME of root seed S is ``numpy.random.SeedSequence(S, spawn_key=words)``, ``words`` the eight
little-endian 32-bit words of the SHA-256 of the name's parts joined by U+001F (the manifest's ``seeds.rule``).
"""

import hashlib
import struct

import numpy as np


def stream_seed(root: int, *name: str) -> int:
    words = struct.unpack("<8I", hashlib.sha256("\x1f".join(name).encode("utf-8")).digest())
    return int(np.random.SeedSequence(root, spawn_key=words).generate_state(1)[0])
