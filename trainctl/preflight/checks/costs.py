"""The monthly budget counts something: the cost allocation tags its filter names are active in Billing.

AWS Budgets filters the environment's budget on tags (`TagKeyValue`: `user:<key>$<value>`, platform_constructs/
budget.py), and Cost Explorer (so Budgets) sees a user-defined tag only once it is activated as a cost allocation tag;
until then the budget counts nothing and never notifies. Cost Explorer's `ListCostAllocationTags` says each key's
status; a key it does not list has not appeared on a bill yet (tags show up there about a day after a tagged resource
is billed), so it cannot be activated before the first deploy: that row is a skip with what to do after it.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from trainctl.preflight.checks import templates
from trainctl.preflight.checks.base import FAIL, PASS, SKIP, Context, Result

NAME = "cost-allocation-tags"


def budget_tag_keys(found: list[templates.Stack]) -> dict[str, str]:
    """Tag key -> budget name, for each key a budget of the templates filters on (`user:<key>$<value>`)."""
    keys: dict[str, str] = {}
    for stack in found:
        for resource in stack.resources("AWS::Budgets::Budget"):
            budget = (resource.get("Properties") or {}).get("Budget") or {}
            for value in (budget.get("CostFilters") or {}).get("TagKeyValue") or []:
                if isinstance(value, str) and value.startswith("user:") and "$" in value:
                    keys[value.removeprefix("user:").split("$", 1)[0]] = str(budget.get("BudgetName", "?"))
    return keys


def tag_statuses(ctx: Context, keys: list[str]) -> dict[str, str]:
    """Status (Active, Inactive) of each user-defined key Cost Explorer lists among `keys`."""
    ce: Any = ctx.aws.client("ce")
    statuses: dict[str, str] = {}
    request: dict[str, Any] = {"TagKeys": keys, "Type": "UserDefined"}
    while True:
        answer = ce.list_cost_allocation_tags(**request)
        statuses |= {t["TagKey"]: t["Status"] for t in answer.get("CostAllocationTags", []) if t.get("TagKey") in keys}
        if not answer.get("NextToken"):
            return statuses
        request["NextToken"] = answer["NextToken"]


def _activate(keys: list[str]) -> str:
    pairs = " ".join(f"TagKey={k},Status=Active" for k in keys)
    return f"`aws ce update-cost-allocation-tags-status --cost-allocation-tags-status {pairs}`"


def cost_allocation_tags(ctx: Context) -> list[Result]:
    """Each tag key the environment's budget filters on is an active cost allocation tag."""
    try:
        keys = budget_tag_keys(ctx.stacks)
    except templates.NoAssembly as error:
        return [Result(NAME, FAIL, f"{error}, so preflight can read the budget's tag filter")]
    if not keys:
        return [Result(NAME, PASS, f"{ctx.env.name} has no monthly budget (monthly_budget_usd in cdk.json): no tag to "
                       "activate")]
    wanted = sorted(keys)
    try:
        statuses = tag_statuses(ctx, wanted)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") not in ("AccessDeniedException", "AccessDenied"):
            raise
        return [Result(NAME, FAIL, f"Cost Explorer refused ListCostAllocationTags ({error}): give the credentials "
                       "ce:ListCostAllocationTags; in an AWS Organization the management (payer) account manages cost "
                       f"allocation tags, so ask its owner to activate {', '.join(wanted)}")]
    budget = ", ".join(sorted(set(keys.values())))
    inactive = [k for k in wanted if statuses.get(k) == "Inactive"]
    unseen = [k for k in wanted if k not in statuses]
    rows = []
    if inactive:
        rows.append(Result(NAME, FAIL, f"tag key(s) {', '.join(inactive)} are inactive cost allocation tags, so budget "
                           f"{budget} counts none of their cost: {_activate(inactive)} (payer account)"))
    if unseen:
        rows.append(Result(NAME, SKIP, f"Billing has not seen tag key(s) {', '.join(unseen)} yet (a key appears about "
                           f"a day after a resource tagged with it is billed): after the first deploy, run preflight "
                           f"again, then {_activate(unseen)} (payer account) so budget {budget} counts them"))
    return rows or [Result(NAME, PASS, f"{', '.join(wanted)} active: budget {budget} counts the environment's "
                           "resources and jobs")]
