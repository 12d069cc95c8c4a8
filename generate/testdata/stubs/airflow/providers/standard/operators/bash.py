"""Stub of the standard provider's bash operator (Airflow 3)."""
from weirstub import require_airflow

require_airflow(3, "airflow.providers.standard.operators.bash")

from weirstub.airflow import BashOperator  # noqa: E402,F401
