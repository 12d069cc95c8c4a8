"""Stub of airflow.datasets (Airflow 2 only)."""
from weirstub import require_airflow

require_airflow(2, "airflow.datasets")

from weirstub.airflow import Asset as Dataset  # noqa: E402,F401
