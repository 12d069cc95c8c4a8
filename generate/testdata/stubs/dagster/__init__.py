"""Stub of the dagster package: records assets, jobs and schedules, and
runs a command under Dagster Pipes as PipesSubprocessClient does. Ops,
graph-backed assets and the dynamic fan-out are in _graphs."""
import base64
import json
import os
import re
import subprocess
import sys
import tempfile
import zlib

from weirstub import RECORD, strict_kwargs

_NAME = re.compile(r"^[A-Za-z0-9_]+$")


class AssetKey:
    def __init__(self, path):
        if not isinstance(path, list) or not all(isinstance(p, str) and _NAME.match(p) for p in path):
            raise ValueError(f"bad asset key {path!r}")
        self.path = path

    def __eq__(self, other):
        return isinstance(other, AssetKey) and other.path == self.path

    def __hash__(self):
        return hash(tuple(self.path))


class AssetExecutionContext:
    def __init__(self, asset_keys=()):
        self.lines = []
        self.log = self
        self.asset_keys = list(asset_keys)

    def info(self, msg):
        self.lines.append(msg)


class RetryPolicy:
    def __init__(self, max_retries=1, delay=None):
        self.max_retries, self.delay = max_retries, delay


class RetryRequested(Exception):
    def __init__(self, max_retries=1, seconds_to_wait=None):
        super().__init__("retry requested")
        self.max_retries, self.seconds_to_wait = max_retries, seconds_to_wait


class Failure(Exception):
    def __init__(self, description=None, metadata=None, allow_retries=None):
        super().__init__(description)
        self.description, self.metadata, self.allow_retries = description, metadata, allow_retries


class MetadataValue:
    @staticmethod
    def json(value):
        return {"json": value}


class MaterializeResult:
    def __init__(self, asset_key=None, metadata=None):
        self.asset_key, self.metadata = asset_key, metadata


class AssetCheckResult:
    def __init__(self, *, passed, asset_key=None, check_name=None, metadata=None, severity=None):
        self.passed, self.asset_key, self.check_name, self.metadata, self.severity = passed, asset_key, check_name, metadata, severity


class AssetCheckSpec:
    def __init__(self, name, *, asset, **kwargs):
        strict_kwargs("AssetCheckSpec", kwargs, {"description", "blocking", "metadata"})
        if not _NAME.match(name) or not isinstance(asset, AssetKey):
            raise ValueError(f"bad check {name!r} on {asset!r}")
        self.name, self.asset = name, asset


class DagsterPipesExecutionError(Exception):
    pass


def _encode(value):
    return base64.b64encode(zlib.compress(json.dumps(value).encode("utf-8"))).decode("utf-8")


_METADATA_TYPES = {"__infer__", "text", "url", "path", "notebook", "json", "md", "float", "int", "bool",
                   "dagster_run", "asset", "null", "table", "table_schema", "table_column_lineage", "timestamp"}


def _metadata(meta):
    """Typed Pipes metadata values, checked, as plain values."""
    out = {}
    for k, v in (meta or {}).items():
        if set(v) != {"raw_value", "type"} or v["type"] not in _METADATA_TYPES:
            raise DagsterPipesExecutionError(f"bad metadata {k}: {v!r}")
        out[k] = v["raw_value"]
    return out


class PipesClientCompletedInvocation:
    def __init__(self, results):
        self._results = results

    def get_results(self):
        return list(self._results)


class PipesSubprocessClient:
    """Runs the command with the Pipes bootstrap (context and messages in
    temporary files, as PipesTempFileContextInjector and
    PipesTempFileMessageReader do) and turns the messages into results,
    failing on what Dagster would reject."""

    def __init__(self, env=None, cwd=None):
        self.env, self.cwd = env, cwd

    def run(self, *, context, command, extras=None, env=None):
        with tempfile.TemporaryDirectory() as tmp:
            ctx_path, msg_path = os.path.join(tmp, "context.json"), os.path.join(tmp, "messages")
            keys = ["/".join(k.path) for k in context.asset_keys]
            with open(ctx_path, "w", encoding="utf-8") as f:
                json.dump({"asset_keys": keys, "code_version_by_asset_key": None, "provenance_by_asset_key": None,
                           "partition_key": None, "partition_key_range": None, "partition_time_window": None,
                           "run_id": "stub-run", "job_name": None, "retry_number": 0, "extras": extras or {}}, f)
            full_env = {**os.environ, **(self.env or {}), **(env or {}),
                        "DAGSTER_PIPES_CONTEXT": _encode({"path": ctx_path}), "DAGSTER_PIPES_MESSAGES": _encode({"path": msg_path})}
            # the child's stdout goes to stderr: weir_inspect prints its JSON on stdout
            proc = subprocess.run(command, env=full_env, cwd=self.cwd, stdout=sys.stderr)
            if proc.returncode != 0:
                raise DagsterPipesExecutionError(f"External execution process failed with code {proc.returncode}")
            messages = []
            if os.path.exists(msg_path):
                with open(msg_path, encoding="utf-8") as f:
                    messages = [json.loads(line) for line in f if line.strip()]
        return PipesClientCompletedInvocation(_results(messages, keys))


def _results(messages, keys):
    if not messages:  # a command that does not speak Pipes: dagster logs a warning and reports nothing
        return []
    methods = [m["method"] for m in messages]
    if not methods or methods[0] != "opened" or methods[-1] != "closed" or methods.count("closed") != 1:
        raise DagsterPipesExecutionError(f"messages {methods}: want opened … closed")
    results, materialized = [], set()
    for m in messages:
        if m.get("__dagster_pipes_version") != "0.1":
            raise DagsterPipesExecutionError(f"bad protocol version in {m!r}")
        p = m["params"]
        if m["method"] == "report_asset_materialization":
            if p["asset_key"] not in keys or p["asset_key"] in materialized:
                raise DagsterPipesExecutionError(f"materialization of {p['asset_key']!r}: the step's assets are {keys}")
            materialized.add(p["asset_key"])
            results.append(MaterializeResult(asset_key=AssetKey(p["asset_key"].split("/")), metadata=_metadata(p["metadata"])))
        elif m["method"] == "report_asset_check":
            if p["asset_key"] not in keys or p["severity"] not in ("WARN", "ERROR") or not isinstance(p["passed"], bool):
                raise DagsterPipesExecutionError(f"bad check {p!r}")
            results.append(AssetCheckResult(passed=p["passed"], asset_key=AssetKey(p["asset_key"].split("/")),
                                            check_name=p["check_name"], metadata=_metadata(p["metadata"]), severity=p["severity"]))
    return results


_ASSET_ARGS = {"key", "deps", "group_name", "description", "tags", "metadata", "retry_policy", "op_tags", "check_specs"}


def _check_tags(tags):
    for k, v in (tags or {}).items():
        if not re.match(r"^[\w.-]{1,63}(/[\w.-]{1,63})?$", k) or not isinstance(v, str):
            raise ValueError(f"bad tag {k!r}: {v!r}")


class AssetSpec:
    def __init__(self, key, **kwargs):
        strict_kwargs("AssetSpec", kwargs, {"deps", "group_name", "description", "tags", "metadata"})
        _check_tags(kwargs.get("tags"))
        self.key, self.kwargs = key, kwargs


def asset(**kwargs):
    strict_kwargs("asset", kwargs, _ASSET_ARGS)
    _check_tags(kwargs.get("tags"))

    def wrap(fn):
        RECORD["assets"].append({"fn": fn, "specs": [AssetSpec(kwargs["key"], **{k: v for k, v in kwargs.items() if k in ("deps", "group_name", "description", "tags", "metadata")})], "kwargs": kwargs})
        return fn

    return wrap


def multi_asset(**kwargs):
    strict_kwargs("multi_asset", kwargs, {"name", "specs", "retry_policy", "op_tags", "check_specs"})

    def wrap(fn):
        if fn.__name__ != kwargs["name"]:
            raise ValueError("name differs from the function name")
        RECORD["assets"].append({"fn": fn, "specs": kwargs["specs"], "kwargs": kwargs})
        return fn

    return wrap


class AssetSelection:
    @staticmethod
    def assets(*defs):
        return {"assets": [d.__name__ for d in defs]}


def define_asset_job(name, selection=None, **kwargs):
    strict_kwargs("define_asset_job", kwargs, {"config", "description", "tags", "run_tags", "metadata", "partitions_def",
                                               "executor_def", "hooks", "op_retry_policy"})
    executor = kwargs.get("executor_def")
    if executor is not None and not isinstance(executor, ExecutorDefinition):
        raise TypeError(f"define_asset_job: executor_def {executor!r} is no ExecutorDefinition")
    job = {"name": name, "selection": selection, "tags": kwargs.get("tags"),
           "executor": {"name": executor.name, "config": executor.config} if executor else None}
    RECORD["jobs"].append(job)
    return job


class ScheduleDefinition:
    def __init__(self, name, job, cron_schedule):
        if len(cron_schedule.split()) != 5:
            raise ValueError(f"bad cron {cron_schedule!r}")
        RECORD["schedules"].append({"name": name, "job": job["name"], "cron": cron_schedule})


RESOURCES = {}  # the resources of the last Definitions, by name


class Definitions:
    def __init__(self, assets=None, jobs=None, schedules=None, resources=None):
        RESOURCES.clear()
        RESOURCES.update(resources or {})
        RECORD["definitions"].append({"assets": len(assets or []), "jobs": len(jobs or []), "schedules": len(schedules or []),
                                      "resources": sorted(resources or {})})


_RESOURCE_TYPES = (PipesSubprocessClient,)  # parameters annotated with these are resources, not inputs

from dagster._graphs import (  # noqa: E402  (they use the classes above)
    AssetIn, DagsterInvalidDefinitionError, DagsterInvariantViolationError, DagsterTypeCheckDidNotPass, DynamicOut,
    DynamicOutput, ExecutorDefinition, In, Nothing, OpExecutionContext, Out, graph_asset, in_process_executor,
    multiprocess_executor, op)
