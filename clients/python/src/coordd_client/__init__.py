"""Thin client for coordd."""
