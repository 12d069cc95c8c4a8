"""Stub of airflow.sdk (Airflow 3 only)."""
from weirstub import require_airflow

require_airflow(3, "airflow.sdk")

from weirstub.airflow import DAG, Asset, BaseHook  # noqa: E402,F401
