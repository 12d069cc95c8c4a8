"""Stub of the airflow package: Airflow 2 exports DAG here."""
from weirstub import airflow_version
from weirstub.airflow import DAG as _DAG

if airflow_version() == 2:
    DAG = _DAG
