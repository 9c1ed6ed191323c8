"""Ways of running the one training loop: `native` (single process, DDP, FSDP2), `smp_v1` and `smp_v2`.

Each module holds one `gptlm.backends.base.Backend`; `gptlm.launch` picks one and imports only that one,
so an SMP v1 container (PyTorch 2.0) never imports what the others need.
"""
