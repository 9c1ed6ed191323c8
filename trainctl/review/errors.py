"""The one error of a review that stops it (exit 2)."""


class ReviewError(RuntimeError):
    """A revision that cannot be checked out or synthesized; the message says which and why."""
