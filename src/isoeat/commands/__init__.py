"""Sub-commands beyond the core ones, discovered by :mod:`isoeat.cli`.

Each module here defines ``register(subparsers, add_stat_options)``, which adds
its parsers, and ``COMMANDS``, a dict from command name to a handler
``handler(args) -> int``. Handlers raise :class:`isoeat.IsoeatError` for user
mistakes; the CLI turns those into one-line errors with exit status 2.
Helpers shared with the core commands live in :mod:`isoeat.cli`
(``calibration_params``, ``FORMATS``).
"""
