"""Tests of compiler/facts/."""
