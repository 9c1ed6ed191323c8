"""Tests of compiler/spec/."""
