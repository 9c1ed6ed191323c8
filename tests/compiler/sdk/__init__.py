"""Tests of compiler/sdk/."""
