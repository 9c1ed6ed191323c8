"""`trainctl prices` (issue 25): a region's SageMaker training prices from the Price List API, offline with botocore's
Stubber (which checks every request against the Pricing service's model), and the tables the repository holds.

The products below have the shape of GetProducts' PriceList entries (one JSON string per product: `product` with its
`attributes`, `terms.OnDemand.<offer>.priceDimensions.<rate>` with `unit` and `pricePerUnit.USD`); usage types have
the form the SageMaker bill uses for training, `<region prefix>-Train:<instance type>`.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

import botocore.session
import pytest
from botocore.stub import Stubber

from compiler.errors import SpecError
from compiler.facts import catalog
from tests.project import ENVIRONMENTS, ROOT
from trainctl.project import prices


def product(usage: str, usd: str, region: str = "us-west-2", unit: str = "Hrs", sku: str = "SKU1") -> str:
    return json.dumps({
        "product": {"productFamily": "ML Instance", "sku": sku,
                    "attributes": {"servicecode": "AmazonSageMaker", "regionCode": region, "usagetype": usage}},
        "terms": {"OnDemand": {f"{sku}.JRTCKXETXF": {
            "effectiveDate": "2026-11-01T00:00:00Z",
            "priceDimensions": {f"{sku}.JRTCKXETXF.6YS6EN2CT7": {"unit": unit, "pricePerUnit": {"USD": usd}}}}}},
        "serviceCode": "AmazonSageMaker",
    })


@pytest.fixture
def pricing():
    client = botocore.session.get_session().create_client(
        "pricing", region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing")
    with Stubber(client) as stub:
        yield client, stub
        stub.assert_no_pending_responses()


def expect(stub: Stubber, region: str, items: list[str], token: str | None = None, given: str | None = None) -> None:
    request: dict[str, Any] = {"ServiceCode": "AmazonSageMaker", "FormatVersion": "aws_v1", "MaxResults": 100,
                               "Filters": [{"Type": "TERM_MATCH", "Field": "regionCode", "Value": region},
                                           {"Type": "CONTAINS", "Field": "usagetype", "Value": "-Train:ml."}]}
    if given:
        request["NextToken"] = given
    answer: dict[str, Any] = {"FormatVersion": "aws_v1", "PriceList": items}
    if token:
        answer["NextToken"] = token
    stub.add_response("get_products", answer, request)


def test_every_page_is_read_and_only_training_usage_of_the_region_counts(pricing) -> None:
    client, stub = pricing
    expect(stub, "us-west-2", [product("USW2-Train:ml.p5.48xlarge", "55.04"),
                               product("USW2-Train:ml.g5.2xlarge", "1.515"),
                               product("USW2-Train:ml.g5.2xlarge", "1.515", sku="SKU2")], token="page2")
    expect(stub, "us-west-2", [product("USW2-Train-Spot:ml.g5.4xlarge", "0.6"),  # not on-demand training
                               product("USE1-Train:ml.g5.4xlarge", "2.03", region="us-east-1"),  # another region
                               product("USW2-Train:ml.nosuch.xlarge", "1.0"),  # not a training type
                               product("USW2-Train:ml.m5.large", "0.0"),  # no price above zero
                               product("USW2-Train:ml.m5.xlarge", "230", unit="Quantity")], given="page2")
    fetched = prices.fetch(client, "us-west-2")
    assert {k: str(v) for k, v in fetched.prices.items()} == {"ml.p5.48xlarge": "55.04", "ml.g5.2xlarge": "1.515"}
    assert fetched.problems == [] and len(fetched.skipped) == 5
    content = prices.table(fetched, "2026-11-26")
    assert list(content["prices_per_hour_usd"]) == [t for t in catalog.catalog() if t in fetched.prices]
    assert content["region"] == "us-west-2" and content["as_of"] == "2026-11-26"
    assert "regionCode=us-west-2" in content["source"] and "terms effective from 2026-11-01" in content["source"]


def test_two_prices_for_one_type_refuse_the_table(pricing, tmp_path: Path) -> None:
    client, stub = pricing
    expect(stub, "us-west-2", [product("USW2-Train:ml.g5.2xlarge", "1.515"),
                               product("USW2-Train:ml.g5.2xlarge", "1.6", sku="SKU2")])
    root = _project(tmp_path)
    with pytest.raises(SpecError) as info:
        prices.write_prices(_args(root, ["us-west-2"]), client=client, today="2026-11-26")
    assert "ml.g5.2xlarge: two prices, 1.515 and 1.6 USD per hour (SKUs SKU1, SKU2); nothing written" in str(info.value)
    assert not (root / catalog.price_file("us-west-2")).exists()


def test_the_table_is_written_where_the_catalog_reads_it(pricing, tmp_path: Path, capsys) -> None:
    client, stub = pricing
    expect(stub, "us-west-2", [product("USW2-Train:ml.g5.2xlarge", "1.5")])
    root = _project(tmp_path)
    assert prices.write_prices(_args(root, ["us-west-2"]), client=client, today="2026-11-26") == 0
    written = json.loads((root / catalog.price_file("us-west-2")).read_text())
    assert written["prices_per_hour_usd"] == {"ml.g5.2xlarge": 1.5}
    assert set(written) == {"region", "as_of", "source", "prices_per_hour_usd"}  # what catalog.price_table reads
    assert "ml.g5.2xlarge: new, 1.5" in capsys.readouterr().out


def test_no_prices_write_nothing(pricing, tmp_path: Path) -> None:
    client, stub = pricing
    expect(stub, "eu-north-9", [])
    root = _project(tmp_path)
    assert prices.write_prices(_args(root, ["eu-north-9"]), client=client, today="2026-11-26") == 1
    assert not (root / catalog.price_file("eu-north-9")).exists()


def test_a_refused_call_is_a_message_naming_the_permission(pricing, tmp_path: Path) -> None:
    client, stub = pricing
    stub.add_client_error("get_products", "AccessDeniedException", "not authorized", 400)
    with pytest.raises(SpecError) as info:
        prices.write_prices(_args(_project(tmp_path), ["us-west-2"]), client=client, today="2026-11-26")
    assert "us-west-2: the Price List API refused or failed" in str(info.value)
    assert "pricing:GetProducts" in str(info.value)


def test_without_region_every_environments_region_is_asked() -> None:
    args = argparse.Namespace(region=None, project_dir=str(ROOT))
    assert prices.regions_of(args) == sorted({e.region for e in ENVIRONMENTS.values()})


def test_changes_name_each_type() -> None:
    assert prices.changes({"a": 1.0, "b": 2.0}, {"a": 1.5, "c": 3.0}) == ["  a: 1.0 -> 1.5", "  c: new, 3.0",
                                                                         "  b: gone (was 2.0)"]


# ------------------------------------------------------------------------------- the tables the repository holds


def test_each_committed_table_names_its_region_source_and_date_and_prices_only_catalog_types() -> None:
    folder = ROOT / "compiler" / "facts" / "data" / "prices"
    tables = sorted(folder.glob("*.json"))
    assert tables, "no price table at all"
    for path in tables:
        data = json.loads(path.read_text())
        assert data["region"] == path.stem
        assert data["source"].strip() and data["as_of"].strip()
        assert set(data["prices_per_hour_usd"]) <= set(catalog.catalog())
        assert all(isinstance(p, float) and p > 0 for p in data["prices_per_hour_usd"].values())


def test_a_region_without_a_table_has_no_price_and_says_how_to_get_one() -> None:
    assert catalog.price("ml.g5.2xlarge", "us-east-1") == 1.515
    assert catalog.price("ml.g5.2xlarge", "eu-north-9") is None
    assert catalog.hourly_cost("ml.g5.2xlarge", 2, "eu-north-9") is None
    assert catalog.price_source("eu-north-9") == ("no verified eu-north-9 prices: run `trainctl prices --region "
                                                   "eu-north-9` and commit compiler/facts/data/prices/eu-north-9.json")
    assert catalog.price_source("us-east-1").startswith("us-east-1 list prices as of ")


def _project(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "cdk.json", tmp_path / "cdk.json")
    return tmp_path


def _args(root: Path, regions: list[str]) -> argparse.Namespace:
    return argparse.Namespace(project_dir=str(root), region=regions, profile=None, api_region="us-east-1")


def test_an_unknown_profile_is_a_message(tmp_path: Path, monkeypatch, capsys) -> None:
    """It was botocore's ProfileNotFound, a traceback; every command with --profile answers it alike."""
    from trainctl.cli import main

    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    assert main(["--project-dir", str(ROOT), "prices", "--region", "us-east-1", "--profile", "nope"]) == 1
    assert capsys.readouterr() == ("", "profile: no AWS profile named 'nope' in this machine's AWS config; name one "
                                       "that `aws configure list-profiles` shows\n")
