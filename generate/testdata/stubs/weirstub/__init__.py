"""Shared recording machinery of the airflow and dagster stubs."""
import os

RECORD = {"dags": [], "assets": [], "jobs": [], "schedules": [], "definitions": []}


def airflow_version():
    """The Airflow layout to mimic: 2 or 3 (WEIR_STUB_AIRFLOW)."""
    return int(os.environ.get("WEIR_STUB_AIRFLOW", "3"))


def require_airflow(version, module):
    """Raises ImportError when module does not exist in the mimicked version."""
    if airflow_version() != version:
        raise ImportError(f"{module} does not exist in Airflow {airflow_version()} (stub)")


def strict_kwargs(cls, kwargs, allowed):
    """Rejects unknown keyword arguments, as the real classes do."""
    unknown = sorted(set(kwargs) - set(allowed))
    if unknown:
        raise TypeError(f"{cls}: unexpected keyword arguments {unknown}")
