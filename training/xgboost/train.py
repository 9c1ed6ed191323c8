"""XGBoost script mode (`framework: xgboost`): gradient-boosted trees on CSV, trained across every instance of the job.

The SageMaker XGBoost container runs this file with the job's hyperparameters as `--name value` arguments and the
`SM_*` variables set. Each instance reads its own share of the train channel (`distribution: ShardedByS3Key`: its
files only); with several instances the container's Rabit helper (`sagemaker_xgboost_container.distributed.rabit_run`,
as AWS's distributed abalone example uses it) joins them into one training, and the first host saves the model. Data:
CSV files without a header, the label in the first column (as the SageMaker XGBoost algorithm reads CSV).

Locally (`trainctl run-local xgboost-tabular --channel train=DIR`) it trains on one host with the xgboost package of
this Python. Imports of xgboost and numpy stay inside the functions that need them, so the argument handling can be
tested without them.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import pickle
import socket
import time
from pathlib import Path
from typing import Any

MODEL_FILE = "xgboost-model"  # what the SageMaker XGBoost model server loads (model_fn of AWS's examples)
HOST_WAIT_SECONDS = 300


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--num_round", type=int, default=100)
    parser.add_argument("--max_depth", type=int, default=6)
    parser.add_argument("--eta", type=float, default=0.3)
    parser.add_argument("--objective", default="binary:logistic")
    parser.add_argument("--eval_metric", default="auc")
    parser.add_argument("--tree_method", default="hist")
    parser.add_argument("--model_dir", default=os.environ.get("SM_MODEL_DIR", "model"))
    parser.add_argument("--train", default=os.environ.get("SM_CHANNEL_TRAIN"))
    parser.add_argument("--validation", default=os.environ.get("SM_CHANNEL_VALIDATION"))
    parser.add_argument("--hosts", default=os.environ.get("SM_HOSTS", '["algo-1"]'))
    parser.add_argument("--current_host", default=os.environ.get("SM_CURRENT_HOST", "algo-1"))
    args, _ = parser.parse_known_args(argv)  # the container may pass more than this script reads
    return args


def csv_files(folder: str | None) -> list[Path]:
    """The channel's data files, in a stable order (hidden files, such as S3 folder markers, left out)."""
    if not folder or not Path(folder).is_dir():
        return []
    return sorted(p for p in Path(folder).rglob("*") if p.is_file() and not p.name.startswith("."))


def load(folder: str | None) -> Any:
    """The channel's rows as an xgboost.DMatrix (label: the first column), or None when it holds no file."""
    files = csv_files(folder)
    if not files:
        return None
    import numpy as np
    import xgboost as xgb

    rows = np.vstack([np.loadtxt(path, delimiter=",", ndmin=2) for path in files])
    return xgb.DMatrix(rows[:, 1:], label=rows[:, 0])


def wait_for_hosts(hosts: list[str], seconds: int = HOST_WAIT_SECONDS) -> None:
    """Every host name resolves before Rabit connects (SageMaker registers them as the cluster comes up)."""
    deadline = time.monotonic() + seconds
    for host in hosts:
        while True:
            try:
                socket.gethostbyname(host)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)


def train(params: dict[str, Any], dtrain: Any, evals: list[Any], num_boost_round: int, model_dir: str,
          is_master: bool) -> None:
    """One xgboost.train; the master host saves the model (`rabit_run` calls it on every host)."""
    import xgboost as xgb

    booster = xgb.train(params=params, dtrain=dtrain, evals=evals, num_boost_round=num_boost_round)
    if is_master:
        Path(model_dir).mkdir(parents=True, exist_ok=True)
        with open(Path(model_dir) / MODEL_FILE, "wb") as out:
            pickle.dump(booster, out)
        logging.info("saved the model to %s", Path(model_dir) / MODEL_FILE)


def booster_params(args: argparse.Namespace) -> dict[str, Any]:
    return {"max_depth": args.max_depth, "eta": args.eta, "objective": args.objective,
            "eval_metric": args.eval_metric, "tree_method": args.tree_method}


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO)
    args = parse_args(argv)
    hosts = json.loads(args.hosts)
    dtrain = load(args.train)
    dval = load(args.validation)
    evals = [(dtrain, "train")] + ([(dval, "validation")] if dval is not None else [])
    train_args = {"params": booster_params(args), "dtrain": dtrain, "evals": evals,
                  "num_boost_round": args.num_round, "model_dir": args.model_dir}
    if len(hosts) > 1:
        from sagemaker_xgboost_container import distributed  # only in the SageMaker XGBoost container

        wait_for_hosts(hosts)
        distributed.rabit_run(exec_fun=train, args=train_args, include_in_training=dtrain is not None, hosts=hosts,
                              current_host=args.current_host, update_rabit_args=True)
    elif dtrain is None:
        raise SystemExit(f"the train channel ({args.train}) holds no CSV file")
    else:
        train(**train_args, is_master=True)


if __name__ == "__main__":
    main()
