"""Stub of airflow.exceptions."""


class AirflowException(Exception):
    """A task failure; retried while retries remain."""


class AirflowFailException(AirflowException):
    """A task failure that is never retried."""


class AirflowSkipException(AirflowException):
    """Marks the task skipped."""
