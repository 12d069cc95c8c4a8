"""Stub of the dagster package: records assets, jobs and schedules."""
import re
import subprocess  # noqa: F401  (the generated code runs weir through it)

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
    def __init__(self):
        self.lines = []
        self.log = self

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


_ASSET_ARGS = {"key", "deps", "group_name", "description", "tags", "metadata", "retry_policy", "op_tags"}


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
    strict_kwargs("multi_asset", kwargs, {"name", "specs", "retry_policy", "op_tags"})

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


def define_asset_job(name, selection=None, tags=None):
    job = {"name": name, "selection": selection, "tags": tags}
    RECORD["jobs"].append(job)
    return job


class ScheduleDefinition:
    def __init__(self, name, job, cron_schedule):
        if len(cron_schedule.split()) != 5:
            raise ValueError(f"bad cron {cron_schedule!r}")
        RECORD["schedules"].append({"name": name, "job": job["name"], "cron": cron_schedule})


class Definitions:
    def __init__(self, assets=None, jobs=None, schedules=None):
        RECORD["definitions"].append({"assets": len(assets or []), "jobs": len(jobs or []), "schedules": len(schedules or [])})
