"""compiler.sdk.framework_images against the real SDK: the same URI, or both fail, across the SDK's training catalog.

The reference is `sagemaker.image_uris.get_training_image_uri`, what the PyTorch, TensorFlow, HuggingFace, MXNet and
Chainer estimators call from `training_image_uri()`. Three layers of combinations (each test prints its count):
every framework x version (aliases, none, an unknown one) x py_version x instance type (one per processor and per
special case) x base framework (HuggingFace) in one region; every version x py_version x instance type x SMP and
other distributions in one region; and every catalog entry in every region the SDK or botocore knows.

To keep ~60k SDK calls fast the reference is wrapped without changing what it computes: its JSON loader
(`config_for_framework`) and botocore endpoint resolver are cached (the SDK re-reads both on every call), and the
`override_pipeline_parameter_var` decorators (which only swap pipeline Parameter objects, and cost half of each call
in `inspect.signature`) are unwrapped. `test_reference_shortcuts_change_nothing` checks a sample against the SDK as
shipped.
"""

from __future__ import annotations

import functools
import itertools
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from compiler.facts import algorithms
from compiler.sdk import framework_images, sdk_rules
from compiler.sdk.framework_images import ImageNotFound, training_image_uri

os.environ.setdefault("SAGEMAKER_SUPPRESS_V2_WARNING", "1")

ROOT = Path(__file__).resolve().parents[3]
REGION = "us-west-2"
UNKNOWN_REGION = "xx-nowhere-1"
Case = dict[str, Any]
Outcome = tuple[str, str]  # ("uri", the URI) or ("error", the exception's type)

SMP = {"torch_distributed": {"enabled": True}, "smdistributed": {"modelparallel": {"enabled": True}}}
DISTRIBUTIONS: tuple[Mapping[str, Any] | None, ...] = (
    None,
    {},
    {"torch_distributed": {"enabled": True}},
    SMP,
    {"torch_distributed": {"enabled": True}, "smdistributed": {"modelparallel": {}}},  # enabled by default
    {"torch_distributed": {"enabled": True}, "smdistributed": {"modelparallel": {"enabled": False}}},
    {"smdistributed": {"modelparallel": {"enabled": True}}},  # no torch_distributed: no SMP v2 image
    {"smdistributed": {"dataparallel": {"enabled": True}}},  # auto-selected container versions
    {"torch_distributed": {"enabled": True}, "smdistributed": "modelparallel"},  # malformed: both must fail
)
# One instance type per processor the SDK can derive, plus the types its special cases key on.
INSTANCE_TYPES = (
    None,
    "ml.m5.xlarge",  # cpu
    "ml.c5.xlarge",  # cpu
    "ml.p2.xlarge",  # gpu, deprecated for PyTorch >= 1.13 and TensorFlow >= 2.12
    "ml.p3.2xlarge",  # gpu
    "ml.p4d.24xlarge",  # gpu, auto-selected container versions
    "ml.p5.48xlarge",  # gpu, SMP cu121
    "ml.g5.xlarge",  # gpu
    "ml.trn1.32xlarge",  # trn: Neuron images
    "ml.inf2.xlarge",  # inf
    "ml.c7g.xlarge",  # Graviton: inference_graviton images
    "ml.m6g.large",  # Graviton
    "local",  # cpu
    "local_gpu",  # gpu
    "p3.2xlarge",  # not an instance type
)
GPU_INSTANCE_TYPES = (None, "ml.m5.xlarge", "ml.p3.2xlarge", "ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.g5.xlarge",
                      "ml.trn1.32xlarge", "ml.c7g.xlarge")


# The reference


@pytest.fixture(scope="module")
def sdk() -> Iterator[Any]:
    from sagemaker import image_uris, utils

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(image_uris, "config_for_framework", functools.cache(image_uris.config_for_framework))
        patch.setattr(utils, "_botocore_resolver", functools.cache(utils._botocore_resolver))
        yield image_uris


@pytest.fixture(scope="module")
def reference(sdk: Any) -> Callable[[Case], Outcome]:
    get_training_image_uri = sdk.get_training_image_uri.__wrapped__
    retrieve = sdk.retrieve

    def outcome(case: Case) -> Outcome:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sdk, "retrieve", retrieve.__wrapped__)
            try:
                return "uri", get_training_image_uri(**case)
            except Exception as error:  # ValueError mostly; TypeError, KeyError... where the SDK trips
                return "error", type(error).__name__

    return outcome


def ours(case: Case) -> Outcome:
    try:
        return "uri", training_image_uri(**case)
    except ImageNotFound:
        return "error", "ImageNotFound"


def compare(reference: Callable[[Case], Outcome], cases: list[Case]) -> list[Outcome]:
    """Both outcomes of every case; fails listing the cases where they differ."""
    mismatches, outcomes = [], []
    for case in cases:
        expected, actual = reference(case), ours(case)
        if expected[0] != actual[0] or (expected[0] == "uri" and expected != actual):
            mismatches.append(f"{case}: SDK {expected[1]} but ours {actual[1]}")
        outcomes.append(expected)
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ:\n" + "\n".join(mismatches[:25])
    return outcomes


# The catalog, read independently of the module under test


@functools.cache
def catalog(name: str, scope: str = "training") -> dict[str, Any]:
    config = sdk_rules.image_uri_config_file(name)
    assert config is not None, name
    return config if "scope" in config else config[scope]


def py_versions_in(entry: Mapping[str, Any]) -> list[str]:
    if "repository" in entry:
        return list(entry.get("py_versions", []))
    nested = [value for key, value in entry.items() if key != "version_aliases" and isinstance(value, dict)]
    if nested and all("repository" in value for value in nested) and entry.get("version_aliases"):
        return sorted({py for value in nested for py in py_versions_in(value)})  # HuggingFace base frameworks
    return list(entry)  # one entry per Python version


def version_names(config: Mapping[str, Any]) -> list[str]:
    return list(config["versions"]) + list(config.get("version_aliases", {}))


def all_py_versions(*configs: Mapping[str, Any]) -> list[str]:
    found = {py for config in configs for entry in config["versions"].values() for py in py_versions_in(entry)}
    return sorted(found)


def huggingface_bases(entry: Mapping[str, Any]) -> list[str]:
    return [key for key in entry if key != "version_aliases"] + list(entry.get("version_aliases", {}))


def base_arguments(base: str | None) -> dict[str, str]:
    if base is None:
        return {}
    if base.startswith("tensorflow"):
        return {"tensorflow_version": base.removeprefix("tensorflow")}
    return {"pytorch_version": base.removeprefix("pytorch")}


def catalog_regions() -> list[str]:
    """Every region a supported catalog entry names, every region botocore knows, and one nobody knows."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            found.update(node.get("registries", {}))
            for value in node.values():
                walk(value)

    for name in ("pytorch", "tensorflow", "huggingface", "mxnet", "chainer", "pytorch-smp", "pytorch-neuron"):
        walk(sdk_rules.image_uri_config_file(name))
    for partition in sdk_rules.botocore_endpoints()["partitions"]:
        found.update(partition["regions"])
    return [*sorted(found), UNKNOWN_REGION]


# Layer 1: every framework, version, py_version and instance type in one region


def framework_cases(framework: str) -> list[Case]:
    training = catalog(framework)
    others = [catalog("pytorch", "inference_graviton"), catalog("pytorch-neuron")] if framework == "pytorch" else []
    if framework == "tensorflow":
        others = [catalog("tensorflow", "inference_graviton")]
    versions = [*version_names(training), *(name for other in others for name in version_names(other)), None, "0.0.1"]
    pys = [*all_py_versions(training, *others), None, "py1"]
    return [
        {"region": REGION, "framework": framework, "framework_version": version, "py_version": py,
         "instance_type": instance_type}
        for version, py, instance_type in itertools.product(dict.fromkeys(versions), pys, INSTANCE_TYPES)
    ]


def huggingface_cases() -> list[Case]:
    training = catalog("huggingface")
    cases = []
    newest = list(training["versions"])[-1]  # what the SDK picks when no version is given
    for version in [*version_names(training), None, "0.0.1"]:
        name = version or newest
        entry = training["versions"].get(training["version_aliases"].get(name, name), {})
        bases = [*huggingface_bases(entry), None, "pytorch0.0.1"]
        pys = [*py_versions_in(entry), None, "py1"] if entry else [None, "py312"]
        for base, py, instance_type in itertools.product(bases, pys, INSTANCE_TYPES):
            cases.append({"region": REGION, "framework": "huggingface", "framework_version": version,
                          "py_version": py, "instance_type": instance_type, **base_arguments(base)})
    # Both base frameworks given (TensorFlow wins), and the newest transformers version (tagged "transformersNone").
    cases.append({"region": REGION, "framework": "huggingface", "framework_version": "4.4", "py_version": "py37",
                  "instance_type": "ml.p3.2xlarge", "tensorflow_version": "2.4", "pytorch_version": "1.6"})
    return cases


@pytest.mark.parametrize("framework", framework_images.SUPPORTED_FRAMEWORKS)
def test_every_version_py_version_and_processor_resolves_as_the_sdk(
    framework: str, reference: Callable[[Case], Outcome]
) -> None:
    cases = huggingface_cases() if framework == "huggingface" else framework_cases(framework)
    outcomes = compare(reference, cases)
    resolved = {uri for kind, uri in outcomes if kind == "uri"}
    print(f"{framework}: {len(cases)} combinations, {len(resolved)} distinct URIs")
    # Every catalog version resolved somewhere, so the comparison is not one of two failures.
    tags = {uri.rsplit(":", 1)[1] for uri in resolved}
    for version in catalog(framework)["versions"]:
        assert any(version in tag for tag in tags), f"{framework} {version} never resolved"


# Layer 2: distributions (SMP v2, smdistributed) and base-framework arguments outside HuggingFace


def distribution_cases() -> list[Case]:
    smp = catalog("pytorch-smp")
    versions = dict.fromkeys([*version_names(smp), *version_names(catalog("pytorch")), None, ""])
    pys = [*all_py_versions(smp), "py36", "py3", None]
    cases = [
        {"region": REGION, "framework": "pytorch", "framework_version": version, "py_version": py,
         "instance_type": instance_type, "distribution": distribution}
        for version, py, instance_type, distribution in itertools.product(versions, pys, GPU_INSTANCE_TYPES,
                                                                          DISTRIBUTIONS[1:])
    ]
    for framework, version, py in (("tensorflow", "2.3", "py37"), ("tensorflow", "2.14", "py310"),
                                   ("mxnet", "1.8", "py37"), ("chainer", "5.0", "py3")):
        cases += [{"region": REGION, "framework": framework, "framework_version": version, "py_version": py,
                   "instance_type": instance_type, "distribution": distribution}
                  for instance_type, distribution in itertools.product(GPU_INSTANCE_TYPES, DISTRIBUTIONS)]
    cases += [{"region": REGION, "framework": "huggingface", "framework_version": "4.56", "py_version": py,
               "instance_type": instance_type, "distribution": distribution, "pytorch_version": "2.8"}
              for py, instance_type, distribution in itertools.product(("py311", "py312"), GPU_INSTANCE_TYPES,
                                                                       DISTRIBUTIONS)]
    return cases


def base_framework_cases() -> list[Case]:
    """tensorflow_version / pytorch_version given to other frameworks: the SDK adds a container_version or fails."""
    cases = []
    for framework, version, py in (("pytorch", "2.3", "py311"), ("pytorch", "1.11", "py38"),
                                   ("tensorflow", "2.14", "py310"), ("mxnet", "1.9", "py38")):
        for instance_type, base in itertools.product(INSTANCE_TYPES, ("pytorch2.1", "tensorflow2.4")):
            cases.append({"region": REGION, "framework": framework, "framework_version": version, "py_version": py,
                          "instance_type": instance_type, **base_arguments(base)})
    return cases


def test_distributions_and_smp_v2_resolve_as_the_sdk(reference: Callable[[Case], Outcome]) -> None:
    cases = distribution_cases() + base_framework_cases()
    outcomes = compare(reference, cases)
    smp_tags = {uri.rsplit(":", 1)[1] for kind, uri in outcomes if kind == "uri" and "smdistributed-modelparallel" in uri}
    print(f"distributions: {len(cases)} combinations, {len(smp_tags)} distinct SMP v2 tags")
    for cuda in ("cu118", "cu121", "cu124"):
        assert any(tag.endswith(cuda) for tag in smp_tags), cuda
    for version in catalog("pytorch-smp")["version_aliases"]:
        assert any(tag.startswith(f"{version}-gpu") for tag in smp_tags), version


# Layer 3: every catalog entry in every region


def region_cases() -> list[Case]:
    """Each catalog entry, by its full version and every py_version it offers, through one instance type per way in."""
    ways_in: list[tuple[str, Mapping[str, Any], str, Mapping[str, Any] | None]] = [
        ("pytorch", catalog("pytorch"), "ml.m5.xlarge", None),
        ("pytorch", catalog("pytorch"), "ml.p3.2xlarge", None),
        ("pytorch", catalog("pytorch", "inference_graviton"), "ml.c7g.xlarge", None),
        ("pytorch", catalog("pytorch-neuron"), "ml.trn1.32xlarge", None),
        ("pytorch", catalog("pytorch-smp"), "ml.p4d.24xlarge", SMP),
        ("tensorflow", catalog("tensorflow"), "ml.m5.xlarge", None),
        ("tensorflow", catalog("tensorflow"), "ml.p3.2xlarge", None),
        ("tensorflow", catalog("tensorflow", "inference_graviton"), "ml.c7g.xlarge", None),
        ("mxnet", catalog("mxnet"), "ml.m5.xlarge", None),
        ("mxnet", catalog("mxnet"), "ml.p3.2xlarge", None),
        ("chainer", catalog("chainer"), "ml.m5.xlarge", None),
        ("chainer", catalog("chainer"), "ml.p3.2xlarge", None),
    ]
    regions = catalog_regions()
    cases = []
    for framework, config, instance_type, distribution in ways_in:
        for version, entry in config["versions"].items():
            pys: list[str | None] = [*py_versions_in(entry)] or [None]
            for py in pys:
                cases += [{"region": region, "framework": framework, "framework_version": version, "py_version": py,
                           "instance_type": instance_type, "distribution": distribution} for region in regions]
    for version, entry in catalog("huggingface")["versions"].items():
        for base in (key for key in entry if key != "version_aliases"):
            cases += [{"region": region, "framework": "huggingface", "framework_version": version, "py_version": py,
                       "instance_type": "ml.p4d.24xlarge", **base_arguments(base)}
                      for py in entry[base]["py_versions"] for region in regions]
    return cases


def test_every_region_resolves_as_the_sdk(reference: Callable[[Case], Outcome]) -> None:
    cases = region_cases()
    outcomes = compare(reference, cases)
    hosts = {uri.split("/", 1)[0].split(".dkr.", 1)[1] for kind, uri in outcomes if kind == "uri"}
    print(f"regions: {len(cases)} combinations, {len(hosts)} ECR hosts")
    suffixes = {host.split(".", 2)[2] for host in hosts}
    assert {"amazonaws.com", "amazonaws.com.cn", "c2s.ic.gov", "sc2s.sgov.gov", "csp.hci.ic.gov"} <= suffixes


# The pieces the SDK keeps in code, checked against it


def test_newest_version_is_picked_as_the_sdk_picks_it(sdk: Any) -> None:
    configs: list[Mapping[str, Any] | None] = [
        sdk_rules.image_uri_config_file(name) for name in (*framework_images.SUPPORTED_FRAMEWORKS, "pytorch-smp")
    ]
    configs += [
        {"training": {"versions": {"2.0.0": {}, "1.10": {}, "1.9.1": {}}}},  # newest first
        {"training": {"version_aliases": {"latest": "1.0"}, "versions": {"1.0": {}, "2.0": {}}}},
        {"versions": {"1.0": {}, "0.9": {}}},
        {"versions": {"3.0": {}}},
        {"versions": {"latest": {}, "1.0": {}}},
        {"versions": {"1.x": {}, "2.x": {}}},
        {"processing": {"versions": {"1.0": {}, "1.1": {}}}},
        {"inference": {"versions": {"1.0": {}}}},
    ]
    for config in configs:
        assert config is not None
        assert framework_images._latest_version_in(config, "training") == sdk._fetch_latest_version_from_config(
            config, "training"), config


def test_il_central_1_fallback_matches_the_sdk_when_botocore_lacks_the_region(
    reference: Callable[[Case], Outcome],
) -> None:
    from botocore.regions import EndpointResolver  # type: ignore[import-untyped]
    from sagemaker import utils

    cases = [{"region": region, "framework": "pytorch", "framework_version": "2.3", "py_version": "py311",
              "instance_type": "ml.p4d.24xlarge"} for region in ("il-central-1", "us-west-2")]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(utils, "_botocore_resolver", lambda: EndpointResolver({"partitions": []}))
        patch.setattr(sdk_rules, "botocore_endpoints", lambda: {"partitions": []})
        assert [kind for kind, _ in compare(reference, cases)] == ["uri", "error"]


def test_rules_copied_from_the_sdk_code_match_it(sdk: Any) -> None:
    from sagemaker import fw_utils

    assert framework_images.TRAINIUM_ALLOWED_FRAMEWORKS == sdk.TRAINIUM_ALLOWED_FRAMEWORKS
    assert framework_images.GRAVITON_ALLOWED_FRAMEWORKS == fw_utils.GRAVITON_ALLOWED_FRAMEWORKS
    assert framework_images.FRAMEWORKS_WITH_CONTAINER_VERSION_SUFFIX == sdk.FRAMEWORKS_WITH_CONTAINER_VERSION_SUFFIX
    assert sdk_rules.constant("GRAVITON_ALLOWED_TARGET_INSTANCE_FAMILY") == fw_utils.GRAVITON_ALLOWED_TARGET_INSTANCE_FAMILY


def test_ecr_hostname_is_botocores_for_every_region(sdk: Any) -> None:
    from sagemaker import utils

    for region in [*catalog_regions(), "us-gov-west-1", "eusc-de-east-1", "eu-isoe-west-1", "ap-southeast-99"]:
        endpoint = utils._botocore_resolver().construct_endpoint("ecr", region)
        if endpoint is None:
            with pytest.raises(ImageNotFound):
                framework_images.ecr_hostname(region)
        else:
            assert framework_images.ecr_hostname(region) == endpoint["hostname"], region


def test_instance_family_and_release_order_match_the_sdk(sdk: Any) -> None:
    from packaging.version import Version
    from sagemaker import utils

    for instance_type in [*INSTANCE_TYPES, "ml_p4d", "ml.p4de.24xlarge", "ml.trn1n.32xlarge", "ML.M5.XLARGE", ""]:
        assert framework_images.instance_family(instance_type) == utils.get_instance_type_family(
            instance_type)  # type: ignore[arg-type]
    # packaging's order over every version the catalogs name (all plain release numbers).
    names = ("pytorch", "tensorflow", "huggingface", "mxnet", "chainer", "pytorch-smp", "pytorch-neuron")
    versions = sorted({version for name in names for version in version_names(catalog(name))}
                      | {*version_names(catalog("pytorch", "inference_graviton")), "1.13", "2.12", "2.0.0", "2"})
    assert sorted(versions, key=framework_images.release) == sorted(versions, key=Version)
    for left, right in itertools.product(versions, repeat=2):
        assert (framework_images.release(left) >= framework_images.release(right)) == (Version(left) >= Version(right))


def test_reference_shortcuts_change_nothing(sdk: Any, reference: Callable[[Case], Outcome]) -> None:
    """The unwrapped, cached reference against the SDK as shipped, on a sample of every layer."""
    from sagemaker import utils

    def shipped(cases: list[Case]) -> list[Outcome]:
        outcomes: list[Outcome] = []
        for case in cases:
            try:
                outcomes.append(("uri", sdk.get_training_image_uri(**case)))  # decorated, as shipped
            except Exception as error:
                outcomes.append(("error", type(error).__name__))
        return outcomes

    sample = (framework_cases("pytorch")[::37] + huggingface_cases()[::41] + distribution_cases()[::83]
              + region_cases()[::61])
    assert [reference(case) for case in sample] == shipped(sample)
    sample = sample[::37]
    with pytest.MonkeyPatch.context() as patch:  # the SDK's own loaders again, re-reading on every call
        patch.setattr(sdk, "config_for_framework", sdk.config_for_framework.__wrapped__)
        cached_resolver: Any = utils._botocore_resolver
        patch.setattr(utils, "_botocore_resolver", cached_resolver.__wrapped__)
        expected = shipped(sample)
    assert [reference(case) for case in sample] == expected
    assert {kind for kind, _ in expected} == {"uri", "error"}


# Errors say what to change


def test_unknown_version_names_the_versions() -> None:
    with pytest.raises(ImageNotFound, match=r"framework_version '9\.9'.*2\.8\.0"):
        training_image_uri(REGION, "pytorch", "9.9", "py312", "ml.p4d.24xlarge")


def test_unknown_region_names_the_regions() -> None:
    with pytest.raises(ImageNotFound, match=rf"region '{UNKNOWN_REGION}'.*us-west-2"):
        training_image_uri(UNKNOWN_REGION, "pytorch", "2.8", "py312", "ml.p4d.24xlarge")


def test_py_version_not_offered_names_the_offered_ones() -> None:
    with pytest.raises(ImageNotFound, match=r"py_version 'py38' is not offered.*py312"):
        training_image_uri(REGION, "pytorch", "2.8", "py38", "ml.p4d.24xlarge")


def test_processor_not_offered_names_the_processors() -> None:
    with pytest.raises(ImageNotFound, match=r"no cpu image \(instance_type ml\.m5\.xlarge\).*offered: gpu"):
        training_image_uri(REGION, "huggingface", "4.56", "py312", "ml.m5.xlarge", pytorch_version="2.8")
    with pytest.raises(ImageNotFound, match=r"no inf image.*offered: trn"):
        training_image_uri(REGION, "pytorch", "2.8", None, "ml.inf2.xlarge")
    with pytest.raises(ImageNotFound, match=r"pytorch-smp 2\.4\.1 training image: no cpu image.*offered: gpu"):
        training_image_uri(REGION, "pytorch", "2.4.1", "py311", "ml.m5.xlarge", distribution=SMP)


def test_unsupported_framework_is_named() -> None:
    """XGBoost and scikit-learn are `retrieve`'s (their estimators call it themselves), not get_training_image_uri's."""
    with pytest.raises(ImageNotFound, match="framework 'xgboost' is not resolved here"):
        training_image_uri(REGION, "xgboost", "1.7-1")


# Layer 4: retrieve(), what the XGBoost and SKLearn estimators call, and the built-in algorithms' catalog entries

RETRIEVED = ("xgboost", "sklearn", *algorithms.names())
RETRIEVE_INSTANCE_TYPES = (None, "ml.m5.xlarge", "ml.p3.2xlarge", "ml.c7g.xlarge", "ml.m6g.large", "ml.trn1.2xlarge",
                           "local", "p3.2xlarge")
RETRIEVE_REGIONS = ("us-east-1", "us-west-2", "cn-north-1", "il-central-1", UNKNOWN_REGION)


def retrieve_cases() -> list[Case]:
    """Every catalog version of each (aliases, none, unknown ones), Python versions, the instance types that pick a
    processor or a Graviton scope, and regions in three partitions plus one the catalog lacks for some."""
    cases = []
    for name in dict.fromkeys(RETRIEVED):
        config = catalog(name)
        versions = [*version_names(config), None, "0.0.1", "1.3-1", "1.0-1"]
        for version, py, instance_type, region in itertools.product(
                dict.fromkeys(versions), (None, "py3", "py37"), RETRIEVE_INSTANCE_TYPES, RETRIEVE_REGIONS):
            cases.append({"framework": name, "region": region, "version": version, "py_version": py,
                          "instance_type": instance_type})
    return cases


def test_retrieve_resolves_as_the_sdk(sdk: Any) -> None:
    """`image_uris.retrieve(..., image_scope="training")` and ours: the same URI, or both fail, for XGBoost,
    scikit-learn and every built-in algorithm of compiler/facts/algorithms.py."""
    mismatches, uris = [], set()
    cases = retrieve_cases()
    for case in cases:
        try:
            expected: Outcome = ("uri", sdk.retrieve.__wrapped__(**case, image_scope="training"))
        except Exception as error:
            expected = ("error", type(error).__name__)
        try:
            actual: Outcome = ("uri", framework_images.retrieve(**case))
        except ImageNotFound:
            actual = ("error", "ImageNotFound")
        if expected[0] != actual[0] or (expected[0] == "uri" and expected != actual):
            mismatches.append(f"{case}: SDK {expected[1]} but ours {actual[1]}")
        if expected[0] == "uri":
            uris.add(expected[1])
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ:\n" + "\n".join(mismatches[:25])
    print(f"retrieve: {len(cases)} combinations, {len(uris)} distinct URIs")
    tags = {uri.rsplit(":", 1)[1] for uri in uris}
    assert {"1.7-1", "1.0-1-cpu-py3", "1.2-1-cpu-py3", "1.5-1-arm64", "1.0-1-arm64-cpu-py3", "1"} <= tags


def test_retrieve_refuses_huggingface_which_needs_its_base_framework() -> None:
    with pytest.raises(ImageNotFound, match="base framework"):
        framework_images.retrieve("huggingface", REGION, "4.56")


# Import cost


def test_resolving_does_not_import_the_sdk() -> None:
    script = (
        "import sys\n"
        "from compiler.sdk.framework_images import training_image_uri\n"
        "uri = training_image_uri('us-west-2', 'pytorch', '2.3', 'py311', 'ml.p4d.24xlarge')\n"
        "print(uri)\n"
        "print(sorted(m for m in ('sagemaker', 'botocore', 'boto3') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    uri, imported = result.stdout.splitlines()
    assert uri == "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.3-gpu-py311"
    assert imported == "[]", f"imported {imported}"
