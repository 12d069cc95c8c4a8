// Package templates holds the text/template files that package generate
// renders into Airflow, Dagster and Argo Workflows files, embedded in FS.
//
// Each template is executed with generate's view of one dagfile (a DAG name,
// tasks in dependency order with their commands, retries, sinks and
// upstreams); the templates only lay the text out: every decision (names,
// quoting, selection) is made in package generate.
package templates
