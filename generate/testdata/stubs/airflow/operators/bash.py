"""Stub of airflow.operators.bash (Airflow 2 only)."""
from weirstub import require_airflow

require_airflow(2, "airflow.operators.bash")

from weirstub.airflow import BashOperator  # noqa: E402,F401
