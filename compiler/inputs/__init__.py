"""What a project hands the compiler, and the typed model a spec becomes: strict YAML and typed reads, cdk.json's
environments and images, the cached zone lookups, the code folders specs name."""
