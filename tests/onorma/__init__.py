"""Tests of ``bayesmv.onorma``."""
