"""Benchmarks behind `arena bench`: each prints figures against a baseline measured in the same run."""
