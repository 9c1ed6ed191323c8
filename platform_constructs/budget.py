"""An environment's monthly cost budget (AWS Budgets), notifying the runs topic before the money is spent.

One COST budget per environment, named `<env>-training`, filtered to the cost allocation tags the platform sets:
`environment` on every resource of the environment's stacks (stacks/platform.py) and `training-platform:environment`
on every training job (compiler/compilation/request.py). Cost Explorer, and so AWS Budgets, sees a tag only once it is activated
as a cost allocation tag in the payer account (Billing console, or `aws ce update-cost-allocation-tags-status`):
until then the budget counts nothing. Notifications at 80% of the actual cost and 100% of the forecast go to the runs
topic, where the run results and alarms go; AWS Budgets may publish there (and use the topic's key) for this account's
budgets only.
"""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_budgets as budgets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from constructs import Construct

from compiler.compilation.request import TAG_ENVIRONMENT
from compiler.inputs.environments import Environment

METADATA_KEY = "training-platform:budget"
STACK_TAG = "environment"  # stacks/platform.py tags every resource of the stage with it
THRESHOLDS = (("ACTUAL", 80.0), ("FORECASTED", 100.0))  # percent of the budget


def tag_filters(env: str) -> list[str]:
    """Budgets' TagKeyValue filter values, `user:<key>$<value>`, one per tag (the values of one filter are ORed)."""
    return [f"user:{STACK_TAG}${env}", f"user:{TAG_ENVIRONMENT}${env}"]


class EnvironmentBudget(Construct):
    """The environment's monthly budget; `budget_name` for the console and the CLI."""

    def __init__(self, scope: Construct, construct_id: str, *, environment: Environment, topic: sns.ITopic,
                 key: kms.IKey) -> None:
        super().__init__(scope, construct_id)
        amount = environment.monthly_budget_usd
        assert amount is not None
        stack = cdk.Stack.of(self)
        self.budget_name = f"{environment.name}-training"
        principal = iam.ServicePrincipal("budgets.amazonaws.com", conditions={
            "StringEquals": {"aws:SourceAccount": stack.account},
            "ArnLike": {"aws:SourceArn": f"arn:{stack.partition}:budgets::{stack.account}:*"}})
        topic.add_to_resource_policy(iam.PolicyStatement(
            sid="BudgetsOfThisAccount", principals=[principal], actions=["sns:Publish"], resources=[topic.topic_arn]))
        key.add_to_resource_policy(iam.PolicyStatement(
            sid="BudgetNotifications", principals=[principal], actions=["kms:Decrypt", "kms:GenerateDataKey*"],
            resources=["*"]))
        self.budget = budgets.CfnBudget(
            self, "Budget",
            budget=budgets.CfnBudget.BudgetDataProperty(
                budget_name=self.budget_name, budget_type="COST", time_unit="MONTHLY",
                budget_limit=budgets.CfnBudget.SpendProperty(amount=amount, unit="USD"),
                cost_filters={"TagKeyValue": tag_filters(environment.name)}),
            notifications_with_subscribers=[self._notify(kind, threshold, topic) for kind, threshold in THRESHOLDS],
        )
        self.budget.cfn_options.metadata = {METADATA_KEY: {
            "environment": environment.name, "monthly_budget_usd": amount, "name": self.budget_name,
            "notifications": [f"{threshold:g}% {kind.lower()}" for kind, threshold in THRESHOLDS]}}

    @staticmethod
    def _notify(kind: str, threshold: float, topic: sns.ITopic) -> Any:
        return budgets.CfnBudget.NotificationWithSubscribersProperty(
            notification=budgets.CfnBudget.NotificationProperty(
                notification_type=kind, comparison_operator="GREATER_THAN", threshold=threshold,
                threshold_type="PERCENTAGE"),
            subscribers=[budgets.CfnBudget.SubscriberProperty(subscription_type="SNS", address=topic.topic_arn)])
