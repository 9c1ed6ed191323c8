"""The XGBoost and scikit-learn examples' scripts (training/xgboost/train.py, training/sklearn/train.py) read the
container's contract: hyperparameters as `--name value` (unknown ones ignored), channels and model folder from SM_*,
CSV files of a channel in a stable order, and a clear exit when the train channel is empty. Neither xgboost nor
scikit-learn is a test dependency: what needs them runs only in their SageMaker images (or under `trainctl run-local`
where they are installed), and the scripts import them only where they train."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from tests.trainer.conftest import TRAINING_DIR


def _script(folder: str) -> ModuleType:
    path = TRAINING_DIR / folder / "train.py"
    spec = importlib.util.spec_from_file_location(f"tabular_{folder}_train", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(params=["xgboost", "sklearn"])
def script(request: pytest.FixtureRequest) -> ModuleType:
    return _script(request.param)


def test_importing_needs_neither_framework(script: ModuleType) -> None:
    """The containers import the entry point as a module: nothing trains, and nothing of the framework is imported."""
    assert callable(script.main)


def test_channels_and_model_folder_come_from_the_contract(script: ModuleType, monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    monkeypatch.setenv("SM_CHANNEL_TRAIN", str(tmp_path / "train"))
    monkeypatch.setenv("SM_CHANNEL_VALIDATION", str(tmp_path / "validation"))
    monkeypatch.setenv("SM_MODEL_DIR", str(tmp_path / "model"))
    args = script.parse_args(["--unknown_from_the_toolkit", "1"])
    assert (args.train, args.validation, args.model_dir) == (str(tmp_path / "train"), str(tmp_path / "validation"),
                                                            str(tmp_path / "model"))


def test_csv_files_are_read_in_a_stable_order_without_hidden_files(script: ModuleType, tmp_path: Path) -> None:
    for name in ("part-1.csv", "part-0.csv", ".keep", "nested/part-2.csv"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("1,0.5\n")
    assert [p.relative_to(tmp_path).as_posix() for p in script.csv_files(str(tmp_path))] == [
        "nested/part-2.csv", "part-0.csv", "part-1.csv"]
    assert script.csv_files(str(tmp_path / "absent")) == []
    assert script.csv_files(None) == []


def test_an_empty_train_channel_exits_saying_so(script: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "train").mkdir()
    with pytest.raises(SystemExit, match="holds no CSV file"):
        script.main(["--train", str(tmp_path / "train"), "--hosts", json.dumps(["algo-1"])])


def test_xgboost_hyperparameters_reach_the_booster() -> None:
    xgb = _script("xgboost")
    args = xgb.parse_args(["--max_depth", "4", "--eta", "0.1", "--objective", "reg:squarederror", "--num_round", "7"])
    assert xgb.booster_params(args) == {"max_depth": 4, "eta": 0.1, "objective": "reg:squarederror",
                                        "eval_metric": "auc", "tree_method": "hist"}
    assert args.num_round == 7


def test_xgboost_waits_for_host_names_and_gives_up_after_its_deadline() -> None:
    xgb = _script("xgboost")
    xgb.wait_for_hosts(["localhost"], seconds=1)
    with pytest.raises(OSError):
        xgb.wait_for_hosts(["no-such-host.invalid"], seconds=0)


def test_sklearn_hyperparameters_have_the_forests_types() -> None:
    args = _script("sklearn").parse_args(["--n_estimators", "200", "--max_depth", "12"])
    assert (args.n_estimators, args.max_depth, args.random_state) == (200, 12, 0)
