"""Tests of ``bayesmv.mvl``."""
