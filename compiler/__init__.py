"""The pure core: specs, validation, request compilation and state-machine definitions.

Nothing in this package imports the CDK, so it loads in milliseconds and is tested without synth.
"""
