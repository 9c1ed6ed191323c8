"""Hyperparameters as the SageMaker toolkit passes them: `--key value` on the command line.

The toolkit json-decodes each value and turns it back into text with `str()`, so booleans arrive as
`True`/`False`, numbers as digits, and dicts (e.g. `mp_parameters`) as `k=v,k=v`. Unknown keys are
ignored (the SDK and toolkit add their own), but a known key with a bad value stops the job at once
with a message naming the key, instead of failing an hour later.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path

from gptlm.errors import UserError
from gptlm.model import PRESETS

DEFAULT_CHECKPOINT_DIR = "/opt/ml/checkpoints"


class ConfigError(UserError, ValueError):
    """A hyperparameter that cannot be used; the message names the key and what to put instead."""


@dataclass(frozen=True)
class TrainConfig:
    model: str = "gpt-125m"
    seq_len: int = 1024
    micro_batch_size: int = 8
    grad_accum_steps: int = 1
    max_steps: int = 1000
    learning_rate: float = 3e-4
    min_lr_ratio: float = 0.1  # cosine decays to learning_rate * min_lr_ratio at max_steps
    warmup_steps: int = 100
    weight_decay: float = 0.1
    grad_clip: float = 1.0  # max global gradient norm; 0 = no clipping
    parallelism: str = "ddp"  # ddp | fsdp
    checkpoint_every: int = 500  # steps; 0 = only at SIGTERM and at the end
    keep_checkpoints: int = 2
    async_checkpoint: bool = True  # write checkpoints in the background (PyTorch >= 2.3; native and SMP v2 backends)
    eval_every: int = 500  # steps between validation losses (and one at the end); 0 = no evaluation
    eval_batches: int = 20  # held-out batches of micro_batch_size windows per rank in each evaluation
    compile: bool = False
    data_channel: str = "train"
    checkpoint_dir: str = ""  # empty: $SM_CHECKPOINT_DIR or /opt/ml/checkpoints
    log_every: int = 10
    seed: int = 1234
    precision: str = "auto"  # auto (bf16 on GPU, fp32 on CPU) | bf16 | fp32
    vocab_size: int = 0  # 0: the preset's vocabulary
    mp_parameters: dict = field(default_factory=dict)  # SageMaker model parallel settings, passed by the SDK

    @property
    def tokens_per_step_per_rank(self) -> int:
        return self.micro_batch_size * self.grad_accum_steps * self.seq_len


_CHOICES = {"parallelism": ("ddp", "fsdp"), "precision": ("auto", "bf16", "fp32"), "model": tuple(PRESETS)}
_POSITIVE = {"seq_len", "micro_batch_size", "grad_accum_steps", "max_steps", "keep_checkpoints", "log_every",
             "eval_batches"}
_NON_NEGATIVE = {"warmup_steps", "checkpoint_every", "eval_every", "weight_decay", "grad_clip", "min_lr_ratio",
                 "vocab_size", "seed"}


def parse_bool(key: str, raw: str) -> bool:
    text = raw.strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off", ""):
        return False
    raise ConfigError(f"hyperparameter {key}: expected true or false, got {raw!r}")


def parse_mapping(key: str, raw: str) -> dict:
    """`mp_parameters` arrives as JSON (SM_HPS) or as the toolkit's `k=v,k=v` command-line form."""
    text = raw.strip()
    if not text:
        return {}
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"hyperparameter {key}: not valid JSON ({exc.msg})") from exc
        if not isinstance(value, dict):
            raise ConfigError(f"hyperparameter {key}: expected a mapping, got {raw!r}")
        return value
    result: dict = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ConfigError(f"hyperparameter {key}: expected k=v,k=v or JSON, got {raw!r}")
        result[name.strip()] = _scalar(value.strip())
    return result


def _scalar(text: str) -> object:
    """One `k=v` value as the toolkit wrote it with str(): True/False, numbers, else the text itself."""
    if text in ("True", "False"):
        return text == "True"
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _convert(key: str, kind: type, raw: str) -> object:
    if kind is bool:
        return parse_bool(key, raw)
    if kind is dict:
        return parse_mapping(key, raw)
    if kind is int:
        try:
            number = float(raw)
        except ValueError:
            raise ConfigError(f"hyperparameter {key}: expected a whole number, got {raw!r}") from None
        if not number.is_integer():
            raise ConfigError(f"hyperparameter {key}: expected a whole number, got {raw!r}")
        return int(number)
    if kind is float:
        try:
            return float(raw)
        except ValueError:
            raise ConfigError(f"hyperparameter {key}: expected a number, got {raw!r}") from None
    return raw.strip().strip('"')  # SDK v2 sends strings JSON-quoted; the toolkit normally unquotes them


def split_args(argv: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """`--key value` / `--key=value` pairs, and what did not look like one (reported, never fatal)."""
    pairs: dict[str, str] = {}
    leftovers: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg.startswith("--") and len(arg) > 2:
            name, sep, value = arg[2:].partition("=")
            if not sep:
                if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                    value = argv[i + 1]
                    i += 1
                else:
                    value = "true"  # a bare flag
            pairs[name.replace("-", "_")] = value
        else:
            leftovers.append(arg)
        i += 1
    return pairs, leftovers


def parse(argv: Sequence[str], environ: Mapping[str, str] = os.environ) -> tuple[TrainConfig, list[str]]:
    """The run's config, and the names of arguments it ignored (to print, so typos are visible)."""
    pairs, leftovers = split_args(argv)
    types = {f.name: f.type for f in fields(TrainConfig)}
    kinds = {"bool": bool, "int": int, "float": float, "str": str, "dict": dict}
    values: dict[str, object] = {}
    ignored = [f"--{k}" for k in pairs if k not in types] + leftovers
    for key, raw in pairs.items():
        if key in types:
            values[key] = _convert(key, kinds[str(types[key])], raw)
    if "mp_parameters" not in values and environ.get("SM_HPS"):
        try:  # the SDK puts modelparallel parameters in SM_HPS; the toolkit may or may not pass them as args
            hps = json.loads(environ["SM_HPS"])
        except json.JSONDecodeError:
            hps = {}
        if isinstance(hps, dict) and isinstance(hps.get("mp_parameters"), dict):
            values["mp_parameters"] = hps["mp_parameters"]
    config = TrainConfig(**values)  # type: ignore[arg-type]
    validate(config)
    return config, ignored


def validate(config: TrainConfig) -> None:
    for key, allowed in _CHOICES.items():
        value = getattr(config, key)
        if value not in allowed:
            raise ConfigError(f"hyperparameter {key}: {value!r} is not one of {', '.join(allowed)}")
    for key in _POSITIVE:
        if getattr(config, key) <= 0:
            raise ConfigError(f"hyperparameter {key}: must be greater than 0, got {getattr(config, key)}")
    for key in _NON_NEGATIVE:
        if getattr(config, key) < 0:
            raise ConfigError(f"hyperparameter {key}: must not be negative, got {getattr(config, key)}")
    if config.learning_rate <= 0:
        raise ConfigError(f"hyperparameter learning_rate: must be greater than 0, got {config.learning_rate}")
    if not config.data_channel.replace("-", "_").replace("_", "").isalnum():
        raise ConfigError(f"hyperparameter data_channel: {config.data_channel!r} is not a channel name")


def checkpoint_dir(config: TrainConfig, environ: Mapping[str, str] = os.environ) -> Path:
    return Path(config.checkpoint_dir or environ.get("SM_CHECKPOINT_DIR") or DEFAULT_CHECKPOINT_DIR)


def data_dir(config: TrainConfig, environ: Mapping[str, str] = os.environ) -> Path:
    name = f"SM_CHANNEL_{config.data_channel.upper()}"
    value = environ.get(name)
    if not value:
        channels = environ.get("SM_CHANNELS", "[]")
        raise ConfigError(f"hyperparameter data_channel: {config.data_channel!r} needs the input channel "
                          f"{config.data_channel!r} (environment {name}), but the job's channels are {channels}; "
                          "add that channel to the workload's inputs or set data_channel to one of them")
    return Path(value)


def model_dir(environ: Mapping[str, str] = os.environ) -> Path:
    return Path(environ.get("SM_MODEL_DIR", "/opt/ml/model"))
