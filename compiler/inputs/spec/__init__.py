"""Reading a workload spec: each topic's reader (`code`, `compute`, `data`, `image`, `options`, `secrets`, `values`,
`watchdog`, the schedule in `compiler.inputs.schedule`) and the whole (`workload`), into the typed model.

Readers only read: every problem names its field and the fix, and how the parts go together is the rules' to check
(`compiler.rules`, run when a spec is loaded: `compiler.spec`).
"""
