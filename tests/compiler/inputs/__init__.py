"""Tests of compiler/inputs/."""
