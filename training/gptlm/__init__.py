"""GPT language-model training that runs inside SageMaker jobs (shipped as /opt/ml/code/gptlm)."""
