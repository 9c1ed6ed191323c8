"""Reusable CDK constructs of the training platform (network, storage, registry, execution role, guards)."""
