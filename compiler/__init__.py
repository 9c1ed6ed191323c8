"""The pure core: specs, validation, request compilation and state-machine definitions.

Nothing in this package imports the CDK or the SageMaker SDK, so it loads in milliseconds and is tested without synth.
Its layers, lowest first; each imports only those below it (import-linter's `compiler-layers` contract):

- `errors`: problems a person can act on (where, which field, what to change);
- `facts/`: the platform's own facts (instance catalog and prices, placeholders, run metrics, endpoint policies, DNS
  firewall, sample values, the typed run and workload summaries, the built-in algorithms' documented interface);
- `sdk/`: the SageMaker Python SDK v2 and botocore's model, mirrored without importing the SDK;
- `inputs/`: every reader of what a project hands the compiler (cdk.json, zone lookups, strict YAML, the spec's
  keys in `inputs/spec/`, schedules, code folders) and the typed model a spec becomes; the one atomic writer of the
  files the project writes for itself (`inputs/files.py`);
- `compilation/`: from the model to the CreateTrainingJob request, images, overrides, costs (at the prices of the
  region it is compiled for: an argument, never a field of the model), schedules, network budget and stack layout;
- `rules/`: every check, registered by what it reads (`rules/registry.py`): the inputs, a workload, a workload in an
  environment, a compiled workload, an environment's plan, the whole project;
- `spec/`: loading spec files into each environment's workloads, running the rules;
- `state_machine/`: the Step Functions definition of a workload's runs;
- `pipeline`: the one pipeline validate, render, summary, review, preflight and synth all run, and the plan of each
  environment the CDK layer builds from.
"""
