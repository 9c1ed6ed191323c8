"""The SageMaker Python SDK v2 and botocore's SageMaker model, mirrored without importing the SDK: the service model's
shapes and limits, what the SDK allows, its instance notions, its framework image URIs."""
