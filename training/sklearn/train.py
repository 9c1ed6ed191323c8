"""scikit-learn script mode (`framework: sklearn`): a random forest on CSV, on one instance (scikit-learn does not train
across instances, and the SKLearn estimator refuses more than one).

The SageMaker scikit-learn container runs this file with the job's hyperparameters as `--name value` arguments and the
`SM_*` variables set. Data: CSV files without a header, the label in the first column. The model is saved as
`model.joblib` in SM_MODEL_DIR (what the SageMaker scikit-learn model server's default `model_fn` of AWS's examples
loads), and the validation accuracy is printed as `validation_accuracy=<value>` for `metric_definitions`.

Locally (`trainctl run-local sklearn-tabular --channel train=DIR`) it trains with the scikit-learn of this Python.
Imports of numpy, joblib and scikit-learn stay inside the functions that need them.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

MODEL_FILE = "model.joblib"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n_estimators", type=int, default=100)
    parser.add_argument("--max_depth", type=int, default=None)
    parser.add_argument("--random_state", type=int, default=0)
    parser.add_argument("--model_dir", default=os.environ.get("SM_MODEL_DIR", "model"))
    parser.add_argument("--train", default=os.environ.get("SM_CHANNEL_TRAIN"))
    parser.add_argument("--validation", default=os.environ.get("SM_CHANNEL_VALIDATION"))
    args, _ = parser.parse_known_args(argv)
    return args


def csv_files(folder: str | None) -> list[Path]:
    if not folder or not Path(folder).is_dir():
        return []
    return sorted(p for p in Path(folder).rglob("*") if p.is_file() and not p.name.startswith("."))


def load(folder: str | None) -> tuple[Any, Any] | None:
    """Features and labels of the channel's rows (label: the first column), or None when it holds no file."""
    files = csv_files(folder)
    if not files:
        return None
    import numpy as np

    rows = np.vstack([np.loadtxt(path, delimiter=",", ndmin=2) for path in files])
    return rows[:, 1:], rows[:, 0]


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    train = load(args.train)
    if train is None:
        raise SystemExit(f"the train channel ({args.train}) holds no CSV file")
    import joblib
    from sklearn.ensemble import RandomForestClassifier

    model = RandomForestClassifier(n_estimators=args.n_estimators, max_depth=args.max_depth,
                                   random_state=args.random_state)
    model.fit(*train)
    validation = load(args.validation)
    if validation is not None:
        print(f"validation_accuracy={model.score(*validation):.6f}", flush=True)
    Path(args.model_dir).mkdir(parents=True, exist_ok=True)
    joblib.dump(model, Path(args.model_dir) / MODEL_FILE)


if __name__ == "__main__":
    main()
