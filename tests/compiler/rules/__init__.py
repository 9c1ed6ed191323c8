"""Tests of compiler/rules/."""
