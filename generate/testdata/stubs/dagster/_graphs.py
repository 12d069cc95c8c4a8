"""Stub of dagster's ops, graph-backed assets, dynamic fan-out and executors.

graph_asset calls its composition function once, as dagster does when the
definition is built, and records the op graph it wires; run_graph (used by
weir_inspect's --run) executes it as the multiprocess executor would: each
op a step once its inputs are ready, the steps of a mapped op at the same
time (threads here, processes in dagster) up to max_concurrent, and a step
whose upstream failed is skipped. It rejects what dagster rejects: unknown
keyword arguments, a Nothing input as a function parameter, a dynamic output
wired without .map/.collect, a DynamicOut op yielding anything but
DynamicOutputs or a mapping key twice, a value of the wrong type."""
import inspect
import re
import threading
from concurrent.futures import ThreadPoolExecutor

from weirstub import RECORD, strict_kwargs

_NAME = re.compile(r"^[A-Za-z0-9_]+$")


class DagsterInvalidDefinitionError(Exception):
    pass


class DagsterInvariantViolationError(Exception):
    pass


class DagsterTypeCheckDidNotPass(Exception):
    pass


class _NothingType:
    """dagster.Nothing: an input or output that carries no value, only an order."""

    def __repr__(self):
        return "Nothing"


Nothing = _NothingType()


class In:
    def __init__(self, dagster_type=None, **kwargs):
        strict_kwargs("In", kwargs, {"description", "default_value", "metadata", "asset_key", "asset_partitions", "input_manager_key"})
        self.dagster_type = dagster_type


class Out:
    def __init__(self, dagster_type=None, **kwargs):
        strict_kwargs(type(self).__name__, kwargs, {"description", "is_required", "io_manager_key", "metadata", "code_version"})
        self.dagster_type = dagster_type


class DynamicOut(Out):
    pass


class DynamicOutput:
    def __init__(self, value, mapping_key, output_name="result", metadata=None):
        if not isinstance(mapping_key, str) or not _NAME.match(mapping_key):
            raise DagsterInvalidDefinitionError(f"mapping_key {mapping_key!r}: only letters, digits and _")
        self.value, self.mapping_key, self.output_name = value, mapping_key, output_name


class AssetIn:
    def __init__(self, key=None, **kwargs):
        strict_kwargs("AssetIn", kwargs, {"metadata", "key_prefix", "input_manager_key", "partition_mapping", "dagster_type"})
        self.key, self.dagster_type = key, kwargs.get("dagster_type")


class ExecutorDefinition:
    def __init__(self, name, fields, config=None):
        self.name, self.fields, self.config = name, fields, config or {}

    def configured(self, config, name=None):
        for k, v in config.items():
            if k not in self.fields or not isinstance(v, self.fields[k]):
                raise DagsterInvalidDefinitionError(f"executor {self.name}: bad config {k}={v!r}")
        return ExecutorDefinition(name or self.name, self.fields, {**self.config, **config})


multiprocess_executor = ExecutorDefinition("multiprocess", {"max_concurrent": int, "retries": dict, "start_method": dict, "tag_concurrency_limits": list})
in_process_executor = ExecutorDefinition("in_process", {"retries": dict, "marker_to_close": str})


class OpExecutionContext:
    def __init__(self, step_key):
        self.step_key, self.lines, self.log, self.asset_keys = step_key, [], self, []

    def info(self, msg):
        self.lines.append(msg)

    warning = info


# The graph being composed (graph_asset sets it while its function runs).
_composing = threading.local()

_OP_ARGS = {"name", "description", "ins", "out", "config_schema", "required_resource_keys", "tags", "version", "retry_policy", "code_version", "pool"}


def op(fn=None, **kwargs):
    strict_kwargs("op", kwargs, _OP_ARGS)
    if fn is not None:
        return OpDefinition(fn, kwargs)
    return lambda f: OpDefinition(f, kwargs)


class OpDefinition:
    """An op: its parameters split into context, resources (annotated with a
    resource class) and data inputs, plus the Nothing inputs of ins=."""

    def __init__(self, fn, kwargs):
        from dagster import RetryPolicy, _check_tags, _RESOURCE_TYPES

        self.fn, self.kwargs = fn, kwargs
        self.name = kwargs.get("name") or fn.__name__
        if not _NAME.match(self.name):
            raise DagsterInvalidDefinitionError(f"op name {self.name!r}")
        _check_tags(kwargs.get("tags"))
        self.retry_policy = kwargs.get("retry_policy")
        if self.retry_policy is not None and not isinstance(self.retry_policy, RetryPolicy):
            raise DagsterInvalidDefinitionError(f"op {self.name}: retry_policy is no RetryPolicy")
        self.out = kwargs.get("out") or Out()
        if not isinstance(self.out, Out):
            raise DagsterInvalidDefinitionError(f"op {self.name}: out= takes an Out or a DynamicOut")
        params = list(inspect.signature(fn).parameters.values())
        self.context = bool(params) and params[0].name == "context"
        params = params[1:] if self.context else params
        self.resources = [p.name for p in params if p.annotation in _RESOURCE_TYPES]
        self.params = [p for p in params if p.annotation not in _RESOURCE_TYPES]
        ins = kwargs.get("ins") or {}
        names = [p.name for p in self.params]
        for name, i in ins.items():
            if not isinstance(i, In):
                raise DagsterInvalidDefinitionError(f"op {self.name}: ins[{name!r}] is no In")
            if i.dagster_type is Nothing and name in names:
                raise DagsterInvalidDefinitionError(f"op {self.name}: input {name} of type Nothing cannot be a parameter")
            if i.dagster_type is not Nothing and name not in names:
                raise DagsterInvalidDefinitionError(f"op {self.name}: input {name} is no parameter")
        self.nothing = [n for n, i in ins.items() if i.dagster_type is Nothing]
        self.inputs = names + self.nothing

    def __call__(self, *args, **kwargs):
        graph = getattr(_composing, "graph", None)
        if graph is None:
            raise DagsterInvariantViolationError(f"op {self.name} called outside a graph (the stub does not invoke ops directly)")
        return graph.add(self, args, kwargs)


class _Handle:
    """An op's output while a graph is composed: static, dynamic (a
    DynamicOut not yet mapped), mapped (inside .map) or collected."""

    def __init__(self, node, kind, dagster_type=None, name=None):
        self.node, self.kind, self.dagster_type, self.name = node, kind, dagster_type, name  # name: a graph input's

    def map(self, fn):
        if self.kind not in ("dynamic", "mapped"):
            raise DagsterInvalidDefinitionError(".map on an output that is not dynamic")
        out = fn(_Handle(self.node, "mapped", self.dagster_type))
        if not isinstance(out, _Handle) or out.kind != "mapped":
            raise DagsterInvalidDefinitionError(".map: the function must return the output of an op it called")
        return out

    def collect(self):
        if self.kind not in ("dynamic", "mapped"):
            raise DagsterInvalidDefinitionError(".collect on an output that is not dynamic")
        return _Handle(self.node, "collected", self.dagster_type)


class _Node:
    def __init__(self, op_def, alias, inputs, mapped):
        self.op, self.alias, self.inputs, self.mapped = op_def, alias, inputs, mapped


class _Graph:
    def __init__(self):
        self.nodes, self.inputs = [], {}

    def add(self, op_def, args, kwargs):
        if len(args) > len(op_def.inputs):
            raise DagsterInvalidDefinitionError(f"op {op_def.name}: {len(args)} arguments for inputs {op_def.inputs}")
        given = dict(zip(op_def.inputs, args))
        for k, v in kwargs.items():
            if k not in op_def.inputs or k in given:
                raise DagsterInvalidDefinitionError(f"op {op_def.name}: bad input {k}")
            given[k] = v
        mapped = False
        for name in op_def.inputs:
            if name not in given:
                if name in op_def.nothing:
                    continue
                raise DagsterInvalidDefinitionError(f"op {op_def.name}: input {name} is not connected")
            handles = given[name] if isinstance(given[name], list) else [given[name]]
            nothing = name in op_def.nothing
            for h in handles:
                if not isinstance(h, _Handle):
                    raise DagsterInvalidDefinitionError(f"op {op_def.name}: input {name} is given {h!r}, not an output")
                if h.kind == "dynamic":
                    raise DagsterInvalidDefinitionError(f"op {op_def.name}: input {name} is a dynamic output: use .map or .collect")
                if (h.dagster_type is Nothing) != nothing:
                    raise DagsterInvalidDefinitionError(f"op {op_def.name}: input {name} and its output disagree on Nothing")
                if isinstance(given[name], list) and (h.kind != "static" or not nothing):
                    raise DagsterInvalidDefinitionError(f"op {op_def.name}: fan-in to {name}: static outputs into a Nothing input only")
                mapped = mapped or h.kind == "mapped"
        if mapped and isinstance(op_def.out, DynamicOut):
            raise DagsterInvalidDefinitionError(f"op {op_def.name}: a DynamicOut inside .map")
        taken = [n.alias for n in self.nodes]
        alias = op_def.name if op_def.name not in taken else f"{op_def.name}_{taken.count(op_def.name) + 1}"
        node = _Node(op_def, alias, given, mapped)
        self.nodes.append(node)
        kind = "mapped" if mapped else "dynamic" if isinstance(op_def.out, DynamicOut) else "static"
        return _Handle(node, kind, op_def.out.dagster_type)


_GRAPH_ASSET_ARGS = {"name", "description", "ins", "config", "key_prefix", "group_name", "partitions_def", "hooks", "metadata",
                     "tags", "owners", "automation_condition", "backfill_policy", "resource_defs", "check_specs", "code_version", "key", "kinds"}


def graph_asset(compose_fn=None, **kwargs):
    strict_kwargs("graph_asset", kwargs, _GRAPH_ASSET_ARGS)
    if compose_fn is None:
        return lambda fn: graph_asset(fn, **kwargs)
    from dagster import AssetKey, AssetSpec, _check_tags

    _check_tags(kwargs.get("tags"))
    ins = kwargs.get("ins") or {}
    params = list(inspect.signature(compose_fn).parameters)
    for name in ins:
        if name not in params:
            raise DagsterInvalidDefinitionError(f"graph_asset {compose_fn.__name__}: ins key {name} is no parameter")
    graph = _Graph()
    deps = []
    for p in params:
        a = ins.get(p) or AssetIn(key=AssetKey([p]))
        if not isinstance(a, AssetIn) or not isinstance(a.key, AssetKey):
            raise DagsterInvalidDefinitionError(f"graph_asset {compose_fn.__name__}: ins[{p!r}] is no AssetIn with a key")
        graph.inputs[p] = _Handle(None, "static", a.dagster_type, name=p)
        deps.append(a.key)
    _composing.graph = graph
    try:
        out = compose_fn(*graph.inputs.values())
    finally:
        _composing.graph = None
    if not isinstance(out, _Handle) or out.kind != "static" or out.node is None:
        raise DagsterInvalidDefinitionError(f"graph_asset {compose_fn.__name__}: return the output of the op that makes the asset")
    graph.output = out.node
    spec = AssetSpec(kwargs["key"], deps=deps, **{k: v for k, v in kwargs.items() if k in ("group_name", "description", "tags", "metadata")})
    RECORD["assets"].append({"fn": compose_fn, "specs": [spec], "kwargs": kwargs, "graph": graph})
    return compose_fn


def graph_record(graph):
    """The recorded op graph: each node's op, whether it is mapped or fans
    out, its upstream nodes, retries and concurrency key."""
    out = []
    for n in graph.nodes:
        ups = sorted({h.node.alias if h.node else "in:" + h.name for v in n.inputs.values() for h in (v if isinstance(v, list) else [v])})
        out.append({"op": n.alias, "dynamic": isinstance(n.op.out, DynamicOut), "mapped": n.mapped, "upstream": ups,
                    "collects": sorted(k for k, v in n.inputs.items() if isinstance(v, _Handle) and v.kind == "collected"),
                    "retries": n.op.retry_policy.max_retries if n.op.retry_policy else 0,
                    "pool": (n.op.kwargs.get("tags") or {}).get("dagster/concurrency_key", "")})
    return out


def _check_type(what, annotation, value):
    if isinstance(annotation, type) and annotation is not inspect.Parameter.empty and not isinstance(value, annotation):
        raise DagsterTypeCheckDidNotPass(f"{what}: {value!r} is no {annotation.__name__}")


def run_graph(graph, call_step, max_concurrent):
    """Runs the graph's steps; call_step(step_key, fn) runs one try loop and
    returns (state, value). Returns the steps' states in order and whether
    the asset's op succeeded."""
    values, states, steps = {}, {}, []  # values: node → value, or {mapping_key: value} for fan-out and mapped nodes
    for n in graph.nodes:
        handles = {k: v for k, v in n.inputs.items()}
        ups = {h.node for v in handles.values() for h in (v if isinstance(v, list) else [v]) if h.node}
        if any(states.get(u) != "success" for u in ups):
            states[n] = "skipped"
            steps.append([n.alias, "skipped"])
            continue
        if n.mapped:
            (dyn,) = {h.node for v in handles.values() for h in (v if isinstance(v, list) else [v]) if h.kind == "mapped"}
            keys = list(values[dyn])
            with ThreadPoolExecutor(max_workers=max_concurrent) as pool:
                futures = {k: pool.submit(_run_op, n, handles, values, k, call_step) for k in keys}
            results = {k: f.result() for k, f in futures.items()}
            for k in keys:
                steps.append([f"{n.alias}[{k}]", results[k][0]])
            states[n] = "success" if all(r[0] == "success" for r in results.values()) else "failure"
            values[n] = {k: r[1] for k, r in results.items()}
        else:
            states[n], values[n] = _run_op(n, handles, values, None, call_step)
            steps.append([n.alias, states[n]])
    return steps, states.get(graph.output) == "success"


def _run_op(n, handles, values, key, call_step):
    from dagster import RESOURCES

    args = {}
    for p in n.op.params:
        h = handles[p.name]
        v = values[h.node]
        if h.kind == "mapped":
            v = v[key]
        elif h.kind == "collected":
            v = list(v.values())
        _check_type(f"op {n.alias} input {p.name}", p.annotation, v)
        args[p.name] = v
    for r in n.op.resources:
        if r not in RESOURCES:
            raise DagsterInvalidDefinitionError(f"op {n.op.name} requires resource {r}, not in the Definitions")
        args[r] = RESOURCES[r]
    step_key = n.alias if key is None else f"{n.alias}[{key}]"

    def run():
        ctx = [OpExecutionContext(step_key)] if n.op.context else []
        out = n.op.fn(*ctx, **args)
        return _outputs(n.op, out)

    return call_step(step_key, n.op.retry_policy, run)


def _outputs(op_def, out):
    """Checks what an op returned or yielded against its out=."""
    if isinstance(op_def.out, DynamicOut):
        if not inspect.isgenerator(out):
            raise DagsterInvariantViolationError(f"op {op_def.name} has a DynamicOut: yield DynamicOutputs")
        got = {}
        for o in out:
            if not isinstance(o, DynamicOutput):
                raise DagsterInvariantViolationError(f"op {op_def.name} has a DynamicOut and yielded {o!r}, not a DynamicOutput")
            if o.mapping_key in got:
                raise DagsterInvariantViolationError(f"op {op_def.name}: mapping key {o.mapping_key!r} yielded twice")
            got[o.mapping_key] = o.value
        return got
    if inspect.isgenerator(out) or isinstance(out, DynamicOutput):
        raise DagsterInvariantViolationError(f"op {op_def.name}: yielded outputs the stub does not model")
    if op_def.out.dagster_type is Nothing and out is not None:
        raise DagsterInvariantViolationError(f"op {op_def.name}: returned {out!r} for a Nothing output")
    ret = inspect.signature(op_def.fn).return_annotation
    _check_type(f"op {op_def.name} output", ret, out)
    return out
