"""The one base class for problems a user fixes by changing the job (not bugs in the trainer).

The entry point prints these as a one-line `error: ...` and exits 2, instead of a traceback.
"""


class UserError(Exception):
    """A hyperparameter, data set, checkpoint or container that does not fit the run."""
