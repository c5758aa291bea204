"""Placeholder replaced by the counter-based generator module."""
