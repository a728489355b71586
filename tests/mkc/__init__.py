"""Tests of ``bayesmv.mkc``."""
