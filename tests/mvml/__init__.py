"""Tests of ``bayesmv.mvml``."""
