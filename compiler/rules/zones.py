"""An environment's pinned Availability Zone is one its account has, as the cached lookup says: never an unverified
zone in a template."""

from __future__ import annotations

from compiler.inputs.environments import zone_problems
from compiler.inputs.reader import Findings
from compiler.rules.registry import inputs_rule
from compiler.rules.views import InputsView


@inputs_rule
def zones_are_the_accounts_own(view: InputsView, f: Findings) -> None:
    f.problems.extend(zone_problems(view.context, view.environments))
