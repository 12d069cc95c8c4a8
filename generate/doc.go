// Package generate renders a dagfile into files an orchestrator runs
// unchanged: an Airflow DAG ([Airflow]), Dagster asset definitions
// ([Dagster]) and an Argo Workflows WorkflowTemplate plus CronWorkflow
// ([Argo]). Every generated task runs
//
//	weir once --task NAME -f <dagfile> --json
//
// The output is static and deterministic: no dagfile is parsed at DAG-parse
// time, asset and dataset URIs (weir://<connection>/<schema>.<table>) are
// fixed at generation time, and no secret is ever written: connections are
// read from the environment by weir itself (Argo and KubernetesPodOperator
// take the variables from a Kubernetes Secret). Each file starts with a header
// naming the dagfile and the command that regenerates it.
//
// Exit codes map to retries the same way everywhere: 75 (the sink is locked
// by another run) is always retried, up to [LockRetries] extra tries beyond
// the dagfile's retries; 2 (bad input) is never retried; other failures are
// retried the dagfile's retries times.
//
// Options.Select narrows the tasks (tag:x, a task name, kind:model);
// dependencies on tasks left out are dropped (dagfile.Lint reports them as
// DAG-004). The format of the output is documented in docs/generate.md.
package generate
