"""A workload's code as a CDK file asset: `sourcedir.tar.gz`, packed by the compiler's rules, written once per content.

The compiler decides what the bundle holds (the plan's `Bundle`: the files `compiler.inputs.sourcedir.scan` found,
checked by the pipeline) and how it is packed; this construct writes the file (under the project's build folder,
named by its content hash, so identical code is one file and one asset) and makes it an asset that `cdk deploy`
uploads. The archive is byte-reproducible, so the asset's hash, and every
state machine that names it, changes only when a file of the code does.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from aws_cdk import aws_s3_assets as s3_assets
from constructs import Construct

from compiler.inputs import sourcedir


def write_bundle(scan: sourcedir.Scan, build_dir: Path) -> Path:
    """The bundle's file (the pipeline's scan, whose problems stopped validate), written atomically the first time
    this content is seen."""
    build_dir.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=build_dir, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            digest = sourcedir.pack_to(scan.entries, out)
        target = build_dir / digest[:32] / "sourcedir.tar.gz"
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, target)
        return target
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


class SourceBundle(Construct):
    """The code asset (the workload's execution role reads exactly its object: `TrainingWorkload`)."""

    def __init__(self, scope: Construct, construct_id: str, *, path: Path) -> None:
        super().__init__(scope, construct_id)
        self.path = path
        self.asset = s3_assets.Asset(self, "Asset", path=str(path))
        # Read once: each workload that ships the bundle names them (a call into the CDK's JavaScript each).
        self.s3_uri: str = self.asset.s3_object_url
        self.object_key: str = self.asset.s3_object_key
        self.bucket_arn: str = self.asset.bucket.bucket_arn
