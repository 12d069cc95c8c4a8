"""Imports a generated Airflow or Dagster file under the stubs and prints
what it defined as JSON.

    python3 weir_inspect.py airflow|dagster FILE            the task graph
    python3 weir_inspect.py airflow|dagster FILE TASK TRY   run one task (try TRY)
    python3 weir_inspect.py airflow|dagster FILE --run      run the DAG (the job) once, in dependency order
"""
import importlib.util
import json
import shlex
import sys

from weirstub import RECORD


def load(path):
    spec = importlib.util.spec_from_file_location("generated", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def airflow_graph():
    (dag,) = RECORD["dags"]
    tasks = {}
    for tid, op in dag.tasks.items():
        kw = op.kwargs
        mapped = getattr(op, "mapped_arg", None)
        if mapped:  # a mapped task: its instances' commands
            kw = {**kw, mapped: op.values[0]}
        argv = shlex.split(kw["bash_command"]) if "bash_command" in kw else kw["cmds"] + kw["arguments"]
        tasks[tid] = {
            "mapped": len(op.values) if mapped else 0,
            "operator": (op.cls if mapped else type(op)).__mro__[1].__name__,
            "upstream": sorted(op.upstream),
            "argv": argv,
            "retries": op.weir_retries,
            "airflow_retries": op.retries,
            "retry_delay": kw["retry_delay"].total_seconds(),
            "timeout": kw["execution_timeout"].total_seconds() if kw.get("execution_timeout") else 0,
            "pool": kw.get("pool", ""),
            "inlets": [a.uri for a in kw.get("inlets", [])],
            "outlets": [a.uri for a in kw.get("outlets", [])],
            "xcom_push": kw.get("do_xcom_push", True),
            "secrets": [s.deploy_target for s in kw.get("secrets", [])],
            "skip_on_exit_code": kw.get("skip_on_exit_code"),
        }
        if "cmds" in kw:
            tasks[tid]["pod"] = pod(kw)
    return {"dag_id": dag.dag_id, "schedule": dag.kwargs["schedule"], "max_active_runs": dag.kwargs["max_active_runs"],
            "catchup": dag.kwargs["catchup"], "tags": dag.kwargs["tags"], "tasks": tasks}


def pod(kw):
    """The pod settings of a KubernetesPodOperator, kubernetes models as dicts."""
    out = {}
    for key in ("image", "image_pull_policy", "namespace", "service_account_name", "container_resources", "volumes", "volume_mounts"):
        if key in kw:
            v = kw[key]
            out[key] = [m.record() for m in v] if isinstance(v, list) else v.record() if hasattr(v, "record") else v
    return out


def dagster_graph():
    from dagster._graphs import graph_record

    assets = {}
    for a in RECORD["assets"]:
        kw, specs = a["kwargs"], a["specs"]
        task = specs[0].kwargs["metadata"]["weir/task"]
        if "graph" in a:  # a graph-backed asset: its ops carry the retries and the pool
            ops = graph_record(a["graph"])
            kw = {**kw, "retry_policy": a["graph"].nodes[0].op.retry_policy}
            if ops[0]["pool"]:
                kw["op_tags"] = {"dagster/concurrency_key": ops[0]["pool"]}
        assets[task] = {
            "function": a["fn"].__name__,
            "keys": [s.key.path for s in specs],
            "deps": sorted({tuple(d.path) for s in specs for d in s.kwargs.get("deps", [])}),
            "group": specs[0].kwargs["group_name"],
            "tags": sorted(specs[0].kwargs.get("tags", {})),
            "retries": kw["retry_policy"].max_retries,
            "retry_delay": kw["retry_policy"].delay,
            "pool": kw.get("op_tags", {}).get("dagster/concurrency_key", ""),
            "checks": ["/".join(c.asset.path) + ":" + c.name for c in kw.get("check_specs", [])],
        }
        if "graph" in a:
            assets[task]["ops"] = ops
    return {"assets": assets, "jobs": RECORD["jobs"], "schedules": RECORD["schedules"], "definitions": RECORD["definitions"]}


class TI:
    def __init__(self, try_number):
        self.try_number = try_number


def run_airflow(task, try_number):
    (dag,) = RECORD["dags"]
    try:
        xcom = dag.tasks[task].execute({"ti": TI(try_number)})
        return {"outcome": "success", "xcom": xcom}
    except Exception as err:  # noqa: BLE001
        return {"outcome": type(err).__name__, "message": str(err)}


def run_airflow_dag():
    """Runs every task once as Airflow's scheduler would (all_success: a task
    runs when all its upstream tasks succeeded, else it is upstream_failed)
    and returns each task's state in the order they ran, and the run's."""
    (dag,) = RECORD["dags"]
    states, order = {}, []
    while len(states) < len(dag.tasks):
        ready = sorted(t for t, op in dag.tasks.items() if t not in states and all(u in states for u in op.upstream))
        if not ready:
            raise SystemExit("cycle")
        for tid in ready:
            op = dag.tasks[tid]
            if any(states[u] != "success" for u in op.upstream):
                states[tid] = "upstream_failed"
            else:
                try:
                    op.execute({"ti": TI(1)})
                    states[tid] = "success"
                except Exception as err:  # noqa: BLE001
                    states[tid] = "failed: " + type(err).__name__
            order.append([tid, states[tid]])
    return {"tasks": order, "state": "success" if all(v == "success" for v in states.values()) else "failed"}


def run_dagster(task, _try):
    import dagster as dg

    for a in RECORD["assets"]:
        if a["specs"][0].kwargs["metadata"]["weir/task"] != task:
            continue
        try:
            context = dg.AssetExecutionContext([s.key for s in a["specs"]])
            out = a["fn"](context, dg.RESOURCES["pipes_subprocess_client"])
            results = list(out) if not isinstance(out, dg.MaterializeResult) else [out]
            return {"outcome": "success", "results": [
                {"key": r.asset_key.path if r.asset_key else None, "metadata": r.metadata,
                 "check": getattr(r, "check_name", None), "passed": getattr(r, "passed", None)} for r in results]}
        except dg.RetryRequested as err:
            return {"outcome": "RetryRequested", "max_retries": err.max_retries, "seconds_to_wait": err.seconds_to_wait}
        except dg.Failure as err:
            return {"outcome": "Failure", "allow_retries": err.allow_retries, "metadata": err.metadata}
    raise SystemExit(f"no asset for task {task}")


def _try_loop(step_key, policy, run):
    """Runs one step as dagster does: RetryRequested retries up to its
    max_retries, a Failure with allow_retries=False never, any other error up
    to the step's RetryPolicy. Returns (state, value)."""
    import dagster as dg

    tries, limit = 0, policy.max_retries if policy else 0
    while True:
        tries += 1
        try:
            return "success", run()
        except dg.RetryRequested as err:
            if tries > err.max_retries:
                return "failure: RetryRequested", None
        except dg.Failure as err:
            if not err.allow_retries or tries > limit:
                return "failure: Failure", None
        except Exception as err:  # noqa: BLE001
            if isinstance(err, (dg.DagsterInvalidDefinitionError, dg.DagsterInvariantViolationError, dg.DagsterTypeCheckDidNotPass)):
                raise  # misuse of the API: the test fails
            if tries > limit:
                return "failure: " + type(err).__name__, None


def run_dagster_job():
    """Runs the job once as dagster's multiprocess executor would: each asset
    once the assets it depends on are materialized (else it is skipped), a
    graph-backed asset's ops as steps (a mapped op's steps at once, up to
    the executor's max_concurrent). Returns the steps' states in order, the
    asset keys materialized and the run's state."""
    import os

    import dagster as dg
    from dagster._graphs import run_graph

    (job,) = RECORD["jobs"]
    executor = job["executor"] or {"name": "multiprocess", "config": {}}
    max_concurrent = executor["config"].get("max_concurrent") or os.cpu_count()
    done, steps, materialized, pending = {}, [], [], list(RECORD["assets"])
    while pending:
        ready = [a for a in pending if all(tuple(d.path) in done for s in a["specs"] for d in s.kwargs.get("deps", []))]
        if not ready:
            raise SystemExit("the assets' deps form a cycle or name no asset")
        a = ready[0]
        pending.remove(a)
        keys = [tuple(s.key.path) for s in a["specs"]]
        ok = all(done[tuple(d.path)] for s in a["specs"] for d in s.kwargs.get("deps", []))
        if not ok:
            steps.append([a["fn"].__name__, "skipped"])
        elif "graph" in a:
            got, ok = run_graph(a["graph"], _try_loop, max_concurrent)
            steps += got
        else:
            def run():
                return list(a["fn"](dg.AssetExecutionContext([s.key for s in a["specs"]]), dg.RESOURCES["pipes_subprocess_client"]))
            state, _ = _try_loop(a["fn"].__name__, a["kwargs"]["retry_policy"], run)
            steps.append([a["fn"].__name__, state])
            ok = state == "success"
        for k in keys:
            done[k] = ok
        if ok:
            materialized += [list(k) for k in keys]
    return {"steps": steps, "materialized": materialized, "max_concurrent": max_concurrent,
            "executor": executor["name"], "state": "success" if all(done.values()) else "failure"}


def main():
    kind, path = sys.argv[1], sys.argv[2]
    load(path)
    if len(sys.argv) == 4 and sys.argv[3] == "--run":
        out = run_airflow_dag() if kind == "airflow" else run_dagster_job()
    elif len(sys.argv) > 3:
        run = run_airflow if kind == "airflow" else run_dagster
        out = run(sys.argv[3], int(sys.argv[4]))
    else:
        out = airflow_graph() if kind == "airflow" else dagster_graph()
    json.dump(out, sys.stdout, indent=1, sort_keys=True, default=list)


if __name__ == "__main__":
    main()
