"""CDK stacks: per environment, stateful platform stacks (network, storage, registry, access) and workloads."""
