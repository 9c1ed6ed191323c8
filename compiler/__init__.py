"""The pure core: specs, validation, request compilation and state-machine definitions.

Nothing in this package imports the CDK or the SageMaker SDK, so it loads in milliseconds and is tested without synth.
Its layers, lowest first; each imports only those below it (import-linter's `compiler-layers` contract):

- `errors`: problems a person can act on (where, which field, what to change);
- `facts/`: the platform's own facts (instance catalog and prices, placeholders, run metrics, endpoint policies, DNS
  firewall, sample values, the typed run and workload summaries);
- `sdk/`: the SageMaker Python SDK v2 and botocore's model, mirrored without importing the SDK;
- `inputs/`: what a project hands the compiler (cdk.json, zone lookups, strict YAML, code folders) and the typed
  model a spec becomes;
- `compilation/`: from the model to the CreateTrainingJob request, images, overrides, costs, schedules, secrets,
  network budget and stack layout;
- `rules/`: the checks that span several parts of a spec;
- `spec/`: reading a workload spec into the model, running the rules;
- `state_machine/`: the Step Functions definition of a workload's runs;
- `pipeline`: the one pipeline validate, render, summary, review and synth all run.
"""
