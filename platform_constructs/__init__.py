"""The CDK constructs the stacks are made of: the network (VPC, training subnet, EFA-ready security groups,
endpoints), storage (buckets, the environment's key, FSx for Lustre), the image registry and build copy, the access
every job shares, each workload's role, state machine and alarm, its code asset, the dashboards, and the synth-time
guards, cdk-nag and checkov acknowledgments and trust conditions that hold them to the project's rules.
"""
