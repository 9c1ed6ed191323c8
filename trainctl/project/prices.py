"""`trainctl prices [--region R]`: write a region's SageMaker training list prices from the AWS Price List API.

Every cost the platform shows or enforces (the state machine's cost estimate, `max_run_cost_usd`, a schedule's monthly
projection against `monthly_budget_usd`) uses the prices of the environment's region, from
`compiler/facts/data/prices/<region>.json`. Synth never asks AWS: this command is the one place that does, with the user's
credentials (`pricing:GetProducts`), and writes the file to commit, with its source and date.

The query (AWS Price List Query API; see docs/aws-assumptions.md, "Prices"):
- `GetProducts`, service code `AmazonSageMaker`, filters `regionCode` = the region (TERM_MATCH) and `usagetype`
  containing `-Train:ml.` (CONTAINS): SageMaker training instance usage is billed under the usage type
  `<region prefix>-Train:<instance type>` (e.g. `USE1-Train:ml.m5.large`); spot, warm-pool, notebook, processing
  and hosting usage have other usage types.
- Each product is checked again here: its `regionCode` and a usage type of exactly that form, an instance type the
  catalog knows (compiler/facts/data/instance_types.csv), On-Demand terms priced in USD per `Hrs`. Two different prices
  for one type, or none above zero, refuse the whole table: a wrong price is worse than none.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from compiler.errors import Problem, SpecError
from compiler.facts import catalog
from compiler.inputs.files import write_text_atomically
from trainctl.common.aws import profile_session
from trainctl.common.lookup import project_of

SERVICE_CODE = "AmazonSageMaker"
TRAINING_USAGE = "-Train:ml."
USAGE_TYPE = re.compile(r"[A-Z0-9]+-Train:(?P<type>ml\.[a-z0-9-]+\.[a-z0-9]+)")
# The Price List Query API answers from these regions only (its endpoints are not related to the prices' region).
API_REGIONS = ("us-east-1", "eu-central-1", "ap-south-1")


def filters(region: str) -> list[dict[str, str]]:
    """The GetProducts filters of one region's training instance prices."""
    return [{"Type": "TERM_MATCH", "Field": "regionCode", "Value": region},
            {"Type": "CONTAINS", "Field": "usagetype", "Value": TRAINING_USAGE}]


@dataclass
class Fetched:
    """What one region's query found: prices by type, the SKUs they came from, and what was left out and why."""

    region: str
    prices: dict[str, Decimal] = field(default_factory=dict)
    skus: dict[str, set[str]] = field(default_factory=dict)
    effective: set[str] = field(default_factory=set)  # the terms' effectiveDate values
    skipped: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _hourly_usd(terms: Mapping[str, Any]) -> tuple[list[Decimal], set[str]]:
    """The On-Demand USD-per-hour prices of one product, and the terms' effective dates."""
    found, dates = [], set()
    for term in (terms.get("OnDemand") or {}).values():
        dates.add(str(term.get("effectiveDate", "")))
        for dimension in (term.get("priceDimensions") or {}).values():
            if dimension.get("unit") != "Hrs":
                continue
            try:
                found.append(Decimal(str(dimension["pricePerUnit"]["USD"])))
            except (KeyError, InvalidOperation):
                continue
    return found, dates - {""}


def read_product(item: str, fetched: Fetched) -> None:
    """Take one PriceList entry (a JSON string) into `fetched`, or say why not."""
    product = json.loads(item)
    attributes = product.get("product", {}).get("attributes", {})
    usage = str(attributes.get("usagetype", ""))
    match = USAGE_TYPE.fullmatch(usage)
    if attributes.get("regionCode") != fetched.region or match is None:
        fetched.skipped.append(f"{usage or '?'} ({attributes.get('regionCode', 'no regionCode')})")
        return
    name = match["type"]
    if catalog.lookup(name) is None:
        fetched.skipped.append(f"{usage} (not a training instance type in botocore's model)")
        return
    prices, dates = _hourly_usd(product.get("terms", {}))
    prices = [p for p in prices if p > 0]
    if not prices:
        fetched.skipped.append(f"{usage} (no On-Demand USD price per Hrs above zero)")
        return
    sku = str(product.get("product", {}).get("sku", "?"))
    for price in prices:
        known = fetched.prices.setdefault(name, price)
        if known != price:
            fetched.problems.append(f"{name}: two prices, {known} and {price} USD per hour (SKUs "
                                    f"{', '.join(sorted(fetched.skus.get(name, set()) | {sku}))})")
    fetched.skus.setdefault(name, set()).add(sku)
    fetched.effective |= dates


def fetch(client: Any, region: str) -> Fetched:
    """Every training instance price of `region` from the Price List Query API (all pages)."""
    fetched = Fetched(region)
    token = None
    while True:
        request: dict[str, Any] = {"ServiceCode": SERVICE_CODE, "Filters": filters(region), "FormatVersion": "aws_v1",
                                   "MaxResults": 100}
        if token:
            request["NextToken"] = token
        answer = client.get_products(**request)
        for item in answer.get("PriceList", []):
            read_product(item, fetched)
        token = answer.get("NextToken")
        if not token:
            return fetched


def table(fetched: Fetched, today: str) -> dict[str, Any]:
    """The price file's content (compiler.facts.catalog.PriceTable), types in the catalog's order."""
    order = list(catalog.catalog())
    dates = sorted({d[:10] for d in fetched.effective})
    effective = f"; terms effective from {dates[0]} to {dates[-1]}" if dates else ""
    source = (f"AWS Price List Query API, pricing:GetProducts ServiceCode={SERVICE_CODE}, regionCode={fetched.region} "
              f"(TERM_MATCH), usagetype containing '{TRAINING_USAGE}' (CONTAINS); OnDemand terms, USD per Hrs"
              f"{effective}; written by `trainctl prices --region {fetched.region}`")
    return {"region": fetched.region, "as_of": today, "source": source,
            "prices_per_hour_usd": {name: float(fetched.prices[name]) for name in order if name in fetched.prices}}


def changes(old: Mapping[str, float], new: Mapping[str, float]) -> list[str]:
    """What a new table changes against the committed one, for the user to read before committing."""
    lines = [f"  {n}: {old[n]} -> {new[n]}" for n in new if n in old and old[n] != new[n]]
    lines += [f"  {n}: new, {new[n]}" for n in new if n not in old]
    lines += [f"  {n}: gone (was {old[n]})" for n in old if n not in new]
    return lines


def regions_of(args: argparse.Namespace) -> list[str]:
    """`--region` as given, else every region cdk.json's environments deploy to."""
    if args.region:
        return list(dict.fromkeys(args.region))
    return sorted({env.region for env in project_of(args).environments().values()})


def write_prices(args: argparse.Namespace, client: Any | None = None, today: str | None = None) -> int:
    project = project_of(args)
    if client is None:
        client = profile_session(args.profile, args.api_region).client("pricing")
    today = today or datetime.now(UTC).date().isoformat()
    status = 0
    for region in regions_of(args):
        try:
            status = max(status, _one_region(project.root, client, region, today))
        except (BotoCoreError, ClientError) as error:
            raise SpecError(Problem("", region, f"the Price List API refused or failed: {error}; give the credentials "
                                    "(--profile, or the usual AWS variables) pricing:GetProducts")) from None
    return status


def _one_region(root: Path, client: Any, region: str, today: str) -> int:
    fetched = fetch(client, region)
    if fetched.problems:
        raise SpecError([Problem("", region, f"{p}; nothing written") for p in fetched.problems])
    if not fetched.prices:
        print(f"{region}: the Price List API returned no SageMaker training prices (is {region} a region SageMaker "
              "trains in?); nothing written", file=sys.stderr)
        return 1
    path = root / catalog.price_file(region)
    old = json.loads(path.read_text())["prices_per_hour_usd"] if path.is_file() else {}
    content = table(fetched, today)
    write_text_atomically(path, json.dumps(content, indent=2) + "\n")
    print(f"{region}: {len(content['prices_per_hour_usd'])} training instance prices written to "
          f"{catalog.price_file(region)} (commit it); {len(fetched.skipped)} products left out")
    for line in changes(old, content["prices_per_hour_usd"]) or ["  no price changed"]:
        print(line)
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("prices", help="write SageMaker training list prices of a region from the AWS Price List API "
                       "(compiler/facts/data/prices/<region>.json; needs pricing:GetProducts)")
    p.add_argument("--region", action="append", help="a region whose prices to write (repeatable; default: every "
                   "region of cdk.json's environments)")
    p.add_argument("--profile", default=None, help="AWS profile (default: the usual credential chain)")
    p.add_argument("--api-region", default=API_REGIONS[0], choices=API_REGIONS,
                   help="the Price List API endpoint to ask (default: us-east-1)")
    p.set_defaults(func=write_prices)
