"""``isoeat whiten-distributed``: fit a whitener on a Dask cluster.

The reference sentences are drawn here, cut into ordered shards, encoded on
the workers (each loads the model once) and their count/mean/co-moment are
tree-reduced into one ZCA whitener, saved like ``isoeat whiten --out``.

Where the workers come from:

* ``--scheduler ADDRESS`` (``tcp://HOST:8786``, or a scheduler file ``.json``
  written by ``dask scheduler --scheduler-file``): an existing cluster
  (lab machine, SLURM with dask-jobqueue);
* ``--local-workers N``: a LocalCluster of N worker processes on this machine;
* neither: every shard in this process, one after the other (the reference run).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

__all__ = ["register", "COMMANDS"]


def _pos_int(name: str, minimum: int = 1):
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}") from None
        if v < minimum:
            raise argparse.ArgumentTypeError(f"{name} must be >= {minimum}, got {v}")
        return v
    return parse


def _pos_float(name: str):
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not v > 0 or v == float("inf"):
            raise argparse.ArgumentTypeError(f"{name} must be a finite number > 0, got {v:g}")
        return v
    return parse


def register(sub: Any, add_stat_options: Any = None) -> None:
    from ..cliargs import add, add_eps_options, examples

    p = sub.add_parser(
        "whiten-distributed",
        description="Fit a calibrator (the ZCA whitener) from reference vectors encoded on Dask workers: the "
                    "reference sample is "
                    "drawn as 'isoeat whiten' draws it, split into ordered shards, each worker encodes its shards "
                    "with a model it loads once, and the partial statistics are tree-reduced. The result does not "
                    "depend on the number of workers. Needs: pip install \"isoeat[distributed]\".",
        epilog=examples("isoeat whiten-distributed --local-workers 2 --save glove-zca.npz",
                        "isoeat whiten-distributed --model minilm --scheduler tcp://127.0.0.1:8786 "
                        "--save minilm-zca.npz"),
    )
    add(p, "--model", "--save")
    where = p.add_mutually_exclusive_group()
    add(p, "--scheduler", group=where)
    where.add_argument("--local-workers", type=_pos_int("--local-workers", 0), default=None, metavar="N",
                       help="start a LocalCluster of N worker processes here (0: run in this process)")
    p.add_argument("--threads-per-worker", type=_pos_int("--threads-per-worker"), default=1, metavar="T",
                   help="threads of each local worker (default 1; torch uses its own threads)")
    add(p, "--scheduler-timeout", "--reference-size", "--corpus", "--reference-unit", "--reference-shards", "--seed")
    add_eps_options(p)
    add(p, "--device", "--no-cache")
    p.add_argument("--retries", type=_pos_int("--retries", 0), default=0, metavar="R",
                   help="extra attempts for a shard task that raised (default 0)")


def _cmd_whiten_distributed(args: argparse.Namespace) -> int:
    from ..calibration import save_calibrator
    from ..calibration.registry import eps_text
    from ..cliargs import eps_params, npz_out
    from ..distributed import fit_calibrator_distributed, require_dask

    if not args.save:
        from .._errors import ConfigError

        raise ConfigError("--save FILE.npz is required: the file the calibrator is saved to")
    npz_out(args.save, "--save", "calibrator")  # before any worker starts

    options: dict[str, Any] = {}
    if args.device is not None:
        options["device"] = args.device
    if args.no_cache:
        options["use_cache"] = False
    kw = dict(n_reference=args.reference_size, corpus=args.corpus, shards=args.reference_shards,
              unit=args.reference_unit,
              seed=args.seed, model_options=options, retries=args.retries, **eps_params(args))
    t0 = time.perf_counter()
    if args.local_workers:
        require_dask()
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=args.local_workers, threads_per_worker=args.threads_per_worker,
                          processes=True, dashboard_address=":0") as cluster, Client(cluster) as client:
            w = fit_calibrator_distributed(args.model, client=client, **kw)
    else:
        w = fit_calibrator_distributed(args.model, scheduler=args.scheduler, timeout=args.scheduler_timeout, **kw)
    path = save_calibrator(w, args.save)
    dm = w.metadata_["distributed"]
    print(f"saved ZCA whitener for {w.metadata_['model']} (dim {w.n_features_in_}, n={w.n_samples_seen_}, "
          f"{eps_text(w.get_params(), w.eps_)}) from {dm['shards']} shard(s) on {dm['workers'] or 'no'} worker(s) "
          f"[{dm['scheduler']}] in {time.perf_counter() - t0:.1f} s to {path}")
    if dm["empty_shards"]:
        print(f"note: empty shard(s): {json.dumps(dm['empty_shards'])}")
    return 0


COMMANDS = {"whiten-distributed": _cmd_whiten_distributed}
