"""Stub of the cncf.kubernetes provider's pod operator."""
from weirstub.airflow import KubernetesPodOperator  # noqa: F401
