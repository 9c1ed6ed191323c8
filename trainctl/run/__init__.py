"""Operating a deployed workload's runs from the terminal: `start`, `runs`, `logs` and `stop` (commands.py registers
them, one module each), and what they share: naming a run and finding its execution (resolve.py), its history
(history.py), its summary (summary.py), how long it took (durations.py), and following it (follow.py)."""
