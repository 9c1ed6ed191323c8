"""What every wing of trainctl stands on: the one lookup of the project and of `--env` (lookup.py), the message a
problem becomes (errors.py), AWS access checked against the environment (aws.py), where a workload's runs live
(target.py), the one reader of a synthesized cloud assembly (assembly.py), the one money formatter (money.py), and
the pass/fail/skip rows preflight and smoke print (verdicts.py), the argparse types of path options (arguments.py)."""
