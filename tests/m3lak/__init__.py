"""Tests of M3LAK: the estimator (``bayesmv.m3lak``), its model and its sampler (``bayesmv.inference``)."""
