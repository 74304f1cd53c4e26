"""Benchmarks of sports-posts: ratios against a baseline measured in the same run."""
