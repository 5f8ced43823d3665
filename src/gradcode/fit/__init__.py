"""Fitting timing models to runs."""
