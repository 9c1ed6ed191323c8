"""Tests of compiler/compilation/."""
