"""`trainctl smoke --env ENV [--gpu]`: the deployed platform proves itself with one tiny run (command.py, whose
docstring is the command's help), checked row by row (rows.py) from what the run left (facts.py)."""
