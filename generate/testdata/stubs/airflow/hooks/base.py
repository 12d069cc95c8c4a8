"""Stub of airflow.hooks.base (Airflow 2's BaseHook)."""
from weirstub.airflow import BaseHook  # noqa: F401
