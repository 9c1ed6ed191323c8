"""The README's "Deploy" section matches what the synthesized app needs: the bootstrap version every template checks,
a bootstrap command per environment, and a login to the registry each environment's image build pulls its base
image from."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.project import ENVIRONMENTS, ROOT

pytestmark = pytest.mark.synth


def deploy_section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("\n## Deploy\n")
    return text[start:text.index("\n## ", start + 1)]


def test_the_readme_names_the_bootstrap_version_every_template_checks(synthesized_app: Any) -> None:
    required = set()
    for stacks in synthesized_app.templates.values():
        for template in stacks.values():
            (assertion,) = template["Rules"]["CheckBootstrapVersion"]["Assertions"]
            refused = assertion["Assert"]["Fn::Not"][0]["Fn::Contains"][0]
            required.add(max(int(v) for v in refused) + 1)
    (version,) = required
    assert f"bootstrap version {version} or later" in deploy_section()


def test_every_environment_has_its_bootstrap_and_registry_login_command(synthesized_app: Any) -> None:
    section = deploy_section()
    for name, env in ENVIRONMENTS.items():
        assert f"npx cdk bootstrap aws://{env.account}/{env.region}" in section, name
        manifest = synthesized_app.outdir / f"assembly-{name}"
        bases = {image["source"]["dockerBuildArgs"]["BASE_IMAGE"]
                 for path in manifest.glob("*.assets.json")
                 for image in json.loads(path.read_text()).get("dockerImages", {}).values()}
        assert bases, name
        for base in bases:
            registry = base.split("/", 1)[0]
            assert re.fullmatch(rf"763104351884\.dkr\.ecr\.{env.region}\.amazonaws\.com", registry), base
            assert (f"aws ecr get-login-password --region {env.region} | docker login --username AWS "
                    f"--password-stdin {registry}") in section, name
