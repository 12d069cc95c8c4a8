package templates

import "embed"

// FS holds the templates: airflow.py.tmpl, dagster.py.tmpl,
// argo-workflowtemplate.yaml.tmpl and argo-cronworkflow.yaml.tmpl.
//
//go:embed *.tmpl
var FS embed.FS
