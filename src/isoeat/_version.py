"""The one home of isoeat's version.

``pyproject.toml`` reads it (``[tool.setuptools.dynamic]``) for the package metadata, ``isoeat --version``
prints it, and every manifest, run folder, calibrator file and result record isoeat writes states it
(``isoeat_version``). A change that alters a printed number or a default is recorded in CHANGELOG.md.
"""

__version__ = "0.1.0"
