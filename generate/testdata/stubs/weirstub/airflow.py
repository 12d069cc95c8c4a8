"""Recording stand-ins for Airflow's DAG, Asset and operators."""
import inspect
import json
import os
import subprocess
import tempfile
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from airflow.exceptions import AirflowException, AirflowSkipException
from weirstub import RECORD, strict_kwargs

_BASE = {"task_id", "retries", "retry_delay", "execution_timeout", "pool", "outlets", "inlets", "doc_md", "dag"}


class DAG:
    """Records a DAG and, inside `with`, the operators created."""

    current = None

    def __init__(self, dag_id, **kwargs):
        strict_kwargs("DAG", kwargs, {"description", "schedule", "start_date", "catchup", "max_active_runs", "tags", "doc_md", "default_args"})
        if "schedule_interval" in kwargs:
            raise TypeError("schedule_interval is gone in Airflow 3")
        if not isinstance(kwargs.get("start_date"), datetime) or kwargs["start_date"].tzinfo is None:
            raise TypeError("start_date must be an aware datetime")
        self.dag_id, self.kwargs, self.tasks = dag_id, kwargs, {}
        RECORD["dags"].append(self)

    def __enter__(self):
        DAG.current = self
        return self

    def __exit__(self, *exc):
        DAG.current = None


class Asset:
    """A dataset / asset identified by its URI."""

    # what the postgres and mysql providers' sanitize_uri require: a host
    # and the path /database/schema/table (postgres) or /database/table
    _PARTS = {"postgres": 4, "mysql": 3}

    def __init__(self, uri):
        if "://" not in uri:
            raise ValueError(f"bad asset URI {uri!r}")
        u = urlsplit(uri)
        if u.scheme in self._PARTS and (not u.netloc or len(u.path.split("/")) != self._PARTS[u.scheme]):
            raise ValueError(f"URI format {u.scheme}:// must contain a host and the database, (schema) and table: {uri!r}")
        self.uri = uri


class BaseOperator:
    """Records its arguments and its upstream tasks."""

    allowed = set()

    def __init__(self, **kwargs):
        strict_kwargs(type(self).__name__, kwargs, _BASE | self.allowed)
        if DAG.current is None:
            raise RuntimeError("operator created outside a DAG")
        self.task_id = kwargs["task_id"]
        if self.task_id in DAG.current.tasks:
            raise ValueError(f"duplicate task_id {self.task_id}")
        for td in ("retry_delay", "execution_timeout"):
            if kwargs.get(td) is not None and not isinstance(kwargs[td], timedelta):
                raise TypeError(f"{td} must be a timedelta")
        self.kwargs, self.upstream = kwargs, set()
        self.retries = kwargs.get("retries", 0)
        DAG.current.tasks[self.task_id] = self

    @classmethod
    def partial(cls, **kwargs):
        """Dynamic task mapping: cls.partial(...).expand(arg=[...])."""
        return _Partial(cls, kwargs)

    def __rshift__(self, other):
        for o in other if isinstance(other, list) else [other]:
            o.upstream.add(self.task_id)
        return other

    def __rrshift__(self, other):
        for o in other:
            self.upstream.add(o.task_id)
        return self

    def exit_code(self, code):
        """Raises as the real operator does for a command's exit code."""
        skip = self.kwargs.get("skip_on_exit_code") or []
        if code in skip:
            raise AirflowSkipException(self.skip_message(code))
        if code != 0:
            raise AirflowException(f"Bash command failed. The command returned a non-zero exit code {code}.")


class BashOperator(BaseOperator):
    """Runs bash_command with bash, like Airflow's BashOperator."""

    allowed = {"bash_command", "env", "append_env", "skip_on_exit_code", "cwd"}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.env = kwargs.get("env")

    def skip_message(self, code):
        return f"Bash command returned exit code {code}. Skipping."

    def execute(self, context):
        # env replaces the environment, as in Airflow (without append_env).
        proc = subprocess.run(["bash", "-c", self.kwargs["bash_command"]], capture_output=True, text=True, env=self.env)
        self.exit_code(proc.returncode)
        return proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else None


class KubernetesPodOperator(BaseOperator):
    """Runs cmds + arguments as the pod would (locally, for the tests). With
    do_xcom_push the pod's /airflow/xcom is a temporary folder and the XCom
    is the JSON in its return.json, as the operator's sidecar reads it."""

    allowed = {"name", "image", "cmds", "arguments", "secrets", "get_logs", "skip_on_exit_code", "namespace", "env_vars", "do_xcom_push",
               "image_pull_policy", "service_account_name", "container_resources", "volumes", "volume_mounts"}

    def skip_message(self, code):
        return f"Pod {self.kwargs.get('name')} returned exit code {code}. Skipping."

    def execute(self, context):
        with tempfile.TemporaryDirectory() as xcom:
            env = dict(os.environ)
            for k, v in (self.kwargs.get("env_vars") or {}).items():
                env[k] = v.replace("/airflow/xcom", xcom, 1) if v.startswith("/airflow/xcom/") else v
            proc = subprocess.run(self.kwargs["cmds"] + self.kwargs["arguments"], capture_output=True, text=True, env=env)
            self.exit_code(proc.returncode)
            if not self.kwargs.get("do_xcom_push"):
                return None
            with open(os.path.join(xcom, "return.json"), encoding="utf-8") as f:
                return json.load(f)


class BaseHook:
    """get_connection reads the URIs from $WEIR_STUB_CONNECTIONS (JSON: id → URI)."""

    @classmethod
    def get_connection(cls, conn_id):
        conns = json.loads(os.environ.get("WEIR_STUB_CONNECTIONS", "{}"))
        if conn_id not in conns:
            raise KeyError(f"The conn_id `{conn_id}` isn't defined")
        return _Connection(conns[conn_id])


class _Connection:
    def __init__(self, uri):
        self.uri = uri

    def get_uri(self):
        return self.uri


class _Partial:
    def __init__(self, cls, kwargs):
        self.cls, self.kwargs = cls, kwargs

    def expand(self, **mapped):
        return MappedOperator(self.cls, self.kwargs, mapped)


class MappedOperator(BaseOperator):
    """A mapped task: one instance of cls per element of the mapped argument
    (one argument only, as the generated code maps), made when it runs, as
    Airflow unmaps a task instance. A mapped task fails when one of its
    instances fails."""

    def __init__(self, cls, partial, mapped):
        if len(mapped) != 1:
            raise TypeError(f"the stub maps one argument, got {sorted(mapped)}")
        ((self.mapped_arg, self.values),) = mapped.items()
        if not isinstance(self.values, list) or not self.values:
            raise TypeError(f"expand({self.mapped_arg}=...) needs a non-empty list")
        if self.mapped_arg in partial:
            raise TypeError(f"{self.mapped_arg} is both partial and mapped")
        self.cls, self.partial_kwargs = cls, partial
        # partial() takes what cls's __init__ takes, as Airflow checks it
        own = {n for n, p in inspect.signature(cls.__init__).parameters.items() if p.kind == p.KEYWORD_ONLY}
        self.allowed = cls.allowed | own
        super().__init__(**partial)
        self.retries = partial.get("retries", 0)  # Airflow schedules a mapped task's retries from partial()

    def instances(self):
        """The unmapped operators, outside the DAG's record."""
        current, DAG.current = DAG.current, _Scratch()
        try:
            return [self.cls(**self.partial_kwargs, **{self.mapped_arg: v}) for v in self.values]
        finally:
            DAG.current = current

    def execute(self, context):
        """Runs every instance (Airflow runs them all, in parallel); fails
        with the first failure once all have run."""
        out, errs = [], []
        for op in self.instances():
            try:
                out.append(op.execute(context))
            except Exception as err:  # noqa: BLE001
                errs.append(err)
        if errs:
            raise errs[0]
        return out


class _Scratch:
    """A DAG stand-in for unmapping: instances share their task_id."""

    def __init__(self):
        self.tasks = _AnyTasks()


class _AnyTasks(dict):
    """Accepts the same task_id again (each instance of a mapped task)."""

    def __contains__(self, key):
        return False
