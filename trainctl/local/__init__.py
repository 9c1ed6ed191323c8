"""`run-local` and `prep-data`: try a workload's entry point on this machine before paying for instances
(command.py, whose docstring is the commands' help): what the run is made of (launch.py), the container's contract
it is given (contract.py), and the token shards it reads (data.py)."""
