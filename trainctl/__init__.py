"""Distributed training on SageMaker: workload specs, their compiler, and the training code."""
