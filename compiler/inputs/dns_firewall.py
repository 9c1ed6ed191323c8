"""cdk.json's `training-platform:dns-firewall`: how each environment runs the training VPC's DNS firewall.

Read with the environments (`compiler.inputs.environments`), so a value synth could not use stops `trainctl
validate` with the same message, before any construct exists. What the firewall admits is a fact of the platform
(`compiler.facts.dns_firewall`); here is only what cdk.json says of it: `{<environment>: {mode, query_logging,
allow}}`, default block in production and alert elsewhere, query logging where it alerts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compiler.inputs.reader import Findings

CONTEXT_KEY = "training-platform:dns-firewall"
MODES = ("block", "alert", "off")
KEYS = frozenset({"mode", "query_logging", "allow"})


@dataclass(frozen=True)
class DnsFirewallSettings:
    """One environment's firewall: `mode` block, alert or off; query logging; extra names its jobs need."""

    mode: str
    query_logging: bool = False
    allow: tuple[str, ...] = ()

    def allows(self, name: str) -> bool:
        """Whether the allow list names `name`: itself, or a `*.` entry above it (Route 53 Resolver DNS Firewall
        domain lists: `*.example.com` matches every subdomain of example.com, not example.com itself)."""
        return any(name == d or (d.startswith("*.") and name.endswith(d[1:])) for d in self.allow)

    @property
    def action(self) -> str:
        """The catch-all rule's action."""
        return self.mode.upper()


def read_dns_firewall(env_name: str, production: bool, context: Mapping[str, Any] | None,
                      findings: Findings) -> DnsFirewallSettings:
    """The environment's settings from the context block (by environment name); each refusal names the key and
    the fix (recorded in `findings`, the default standing in)."""
    default = DnsFirewallSettings(mode="block" if production else "alert", query_logging=not production)
    raw = context.get(env_name, {}) if isinstance(context, Mapping) else {}  # another shape: unknown_environments
    where = f"{CONTEXT_KEY}.{env_name}"
    if not isinstance(raw, Mapping) or set(raw) - KEYS:
        findings.problem(where, f"expected an object with mode ({', '.join(MODES)}), query_logging (true or false) "
                                "and allow (a list of domain names)")
        return default
    mode = raw.get("mode", default.mode)
    if mode not in MODES:
        findings.problem(f"{where}.mode", f"{mode!r}; use one of {', '.join(MODES)}")
        mode = default.mode
    logging = raw.get("query_logging", mode == "alert")  # what ALERT lets through is read in the query logs
    if not isinstance(logging, bool):
        findings.problem(f"{where}.query_logging", f"{logging!r}; use true or false")
        logging = mode == "alert"
    allow = raw.get("allow", [])
    if not isinstance(allow, list) or not all(isinstance(d, str) and _domain(d) for d in allow):
        findings.problem(f"{where}.allow", "a list of domain names, each 1-255 characters of letters, digits, '-' and "
                                           "'.', optionally starting with '*.' (e.g. huggingface.co, *.huggingface.co)")
        allow = []
    return DnsFirewallSettings(mode=mode, query_logging=logging, allow=tuple(allow))


def unknown_environments(context: Mapping[str, Any] | None, names: set[str], findings: Findings) -> None:
    """A block for an environment cdk.json does not declare would be ignored: refuse it, naming the environments."""
    if context is None:
        return
    if not isinstance(context, Mapping):
        findings.problem(CONTEXT_KEY, "must map environment names to {mode, query_logging, allow}")
        return
    for name in sorted(set(context) - names):
        findings.problem(f"{CONTEXT_KEY}.{name}", f"no environment {name!r} in training-platform:environments "
                                                  f"({', '.join(sorted(names))}); remove the block or fix its name")


def _domain(name: str) -> bool:
    bare = name[2:] if name.startswith("*.") else name
    labels = bare.split(".")
    return 0 < len(name) <= 255 and all(
        label and len(label) <= 63 and all(c.isascii() and (c.isalnum() or c == "-") for c in label)
        for label in labels)
