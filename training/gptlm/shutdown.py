"""How a training process ends: in order, with its own exit code, and without C++ destructors at interpreter exit.

Why this exists: PyTorch's process groups, and the objects that hold them (a DDP or FSDP module, the optimizer
through its parameters, a backend's extra groups), own C++ threads. Left to Python, they are freed during
interpreter finalization, where a rank can die with SIGABRT ("terminate called without an active exception")
after training, the checkpoint and the export all finished: SageMaker then marks the job Failed and does not
upload the model. So a run leaves one of two ways:

- orderly (it finished, or every rank agreed to stop on SIGTERM): the training objects are released, every rank
  meets at a barrier on each of its groups, each group is destroyed explicitly, and a rank that hosts the
  rendezvous store waits (bounded) until its peers have left, so no peer tears down against a dead store. A
  watchdog bounds it all: a peer that vanished cannot keep this rank from exiting.
- failed (an exception): peers may be blocked in a collective, so there is no barrier and nothing is destroyed;
  the traceback is printed and flushed.

Either way the entry point leaves with `os._exit(code)` (`exit_process`): output is flushed first, and nothing that
could abort runs after the exit code is decided; a SIGTERM from then on (torchrun ending the other ranks once one
has exited) leaves with that code too.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

# Seconds the orderly teardown may take before the process leaves anyway (a peer that died after the last
# agreement would otherwise keep this rank in a barrier until the process group's 30-minute timeout).
TEARDOWN_SECONDS = 120.0
LEFT_KEY = "gptlm/ranks-left"  # store counter: peers that finished their teardown
EXIT_FAILED = 1
EXIT_INTERRUPTED_BY_USER = 130  # 128 + SIGINT


def flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed or broken stream: nothing more can be said on it
            stream.flush()


def _exit_after(seconds: float, code: int) -> threading.Timer:
    """A daemon timer that ends the process with `code` unless cancelled first."""

    def expire() -> None:
        print(f"teardown did not finish within {seconds:.0f} s (a peer may have died); exiting with {code}",
              file=sys.stderr, flush=True)
        os._exit(code)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()
    return timer


def wait_for_peers(store: Any, rank: int, world_size: int, deadline: float, poll: float = 0.05) -> bool:
    """Every rank but 0 counts itself out on `store`; rank 0 (whose process hosts the store) returns once all
    have, or at `deadline` (time.monotonic). True when every peer was seen leaving."""
    if rank != 0:
        store.add(LEFT_KEY, 1)
        return True
    while store.add(LEFT_KEY, 0) < world_size - 1:
        if time.monotonic() >= deadline:
            return False
        time.sleep(poll)
    return True


def close_groups(extra_groups: Sequence[Any], store: Any, rank: int, world_size: int,
                 seconds: float = TEARDOWN_SECONDS) -> None:
    """Collective, orderly paths only: barrier on each group, destroy the extra groups and then the default one,
    then leave in store order. A no-op when this process never joined a process group."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return
    deadline = time.monotonic() + seconds
    gc.collect()  # modules and optimizers caught in reference cycles: freed now, while their groups still exist
    for group in [*extra_groups, None]:
        dist.barrier(group=group)
    for group in extra_groups:
        dist.destroy_process_group(group)
    dist.destroy_process_group()
    if store is not None and world_size > 1:
        wait_for_peers(store, rank, world_size, deadline)


def _leave_on_sigterm(code: int) -> Any:
    """From now on SIGTERM ends the process with `code` (returns the previous handler).

    The run's outcome is decided and its files are written. torchrun's agent sends SIGTERM to every rank still
    running as soon as one rank exits non-zero (143 after a stop): a peer still in its teardown must then leave with
    the same code, not die of the signal (seen as exit -15 in about 1 of 3 stopped two-rank launches)."""

    def leave(signum: int, frame: object) -> None:
        flush()
        os._exit(code)

    return signal.signal(signal.SIGTERM, leave)


def orderly(close: Callable[[], None], code: int, seconds: float = TEARDOWN_SECONDS) -> int:
    """Run `close` (the backend's teardown) under a watchdog that exits with `code` if it hangs, and with SIGTERM
    leaving with `code`; returns `code`."""
    flush()
    previous = _leave_on_sigterm(code)
    timer = _exit_after(seconds, code)
    try:
        close()
    finally:
        timer.cancel()
        signal.signal(signal.SIGTERM, previous)
    flush()
    return code


def exit_code(value: object) -> int:
    """The status a `SystemExit` (or `main`'s return) leaves with, as Python's own exit gives it, except that a
    failure never reads as success: None is 0; an integer is its status, but one whose low byte is 0 (256, 512: the
    kernel keeps 8 bits, so Python would exit 0) is EXIT_FAILED; anything else (`sys.exit("message")`) is printed to
    standard error, as Python prints it, and is EXIT_FAILED."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value if value == 0 or value % 256 else EXIT_FAILED
    print(value, file=sys.stderr)
    return EXIT_FAILED


def exit_process(main: Callable[[list[str]], int], argv: list[str]) -> None:
    """The entry point's last word: run `main`, then leave with its code without finalizing the interpreter."""
    try:
        code = exit_code(main(argv))
    except SystemExit as exc:
        code = exit_code(exc.code)
    except KeyboardInterrupt:
        traceback.print_exc()
        code = EXIT_INTERRUPTED_BY_USER
    except BaseException:  # an unexpected error: peers may be mid-collective, so leave without a teardown
        traceback.print_exc()
        code = EXIT_FAILED
    _leave_on_sigterm(code)
    flush()
    os._exit(code)
