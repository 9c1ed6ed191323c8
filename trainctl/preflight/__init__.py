"""`trainctl preflight --env ENV`: what only the account can show, checked before a deploy (command.py), each check
one function in checks/, reading the context context.py gathers once."""
