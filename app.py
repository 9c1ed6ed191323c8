#!/usr/bin/env python3
"""The CDK app (`cdk synth` runs this): one Stage per environment of cdk.json; see stacks/app.py."""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

from compiler.inputs.project import Project
from stacks.app import main

if __name__ == "__main__":
    sys.exit(main(Project(Path(__file__).resolve().parent)))
