"""`trainctl preflight`'s checks, one function each (cdk-nag style): what only the account can show before a deploy.

Every check takes the `Context` and returns one or more `Result` rows (pass, fail or skip, with a one-line detail
that names the fix). Checks call only Describe/List/Get/Validate operations, so preflight is read-only and free.
"""

from trainctl.preflight.checks.base import FAIL, PASS, SKIP, Aws, Check, Context, Result

__all__ = ["FAIL", "PASS", "SKIP", "Aws", "Check", "Context", "Result"]
