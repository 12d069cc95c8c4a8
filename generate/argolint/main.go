// Command argolint checks Argo Workflows manifests with Argo's own code, so
// that weir's generated files are known to load in Argo v4:
//
//  1. each file is decoded laxly into Argo's types (wfv1.CronWorkflow,
//     wfv1.WorkflowTemplate), as the controller does, and every key of the
//     file must survive the round trip: a key Argo's types do not know (the
//     pre-3.6 spec.schedule or synchronization.semaphore) is silently
//     dropped by the controller, so it fails here;
//  2. the files are linted exactly as `argo lint --offline --strict FILE…`
//     lints them (lint.RunLint with an offline client).
//
// It lives in its own module so that weir's binary never links Kubernetes.
// scripts/test.sh builds it and runs it over generate/testdata/golden.
//
//	go run . FILE...   exit 0 when every file passes, 1 otherwise
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/argoproj/argo-workflows/v4/cmd/argo/lint"
	"github.com/argoproj/argo-workflows/v4/pkg/apiclient"
	wf "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow"
	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	"sigs.k8s.io/yaml"
)

func main() {
	files := os.Args[1:]
	if len(files) == 0 {
		fmt.Fprintln(os.Stderr, "usage: argolint FILE...")
		os.Exit(2)
	}
	failed := false
	for _, f := range files {
		if err := checkLax(f); err != nil {
			fmt.Fprintf(os.Stderr, "argolint: %s: %v\n", f, err)
			failed = true
		}
	}
	ctx, client, err := apiclient.NewClientFromOptsWithContext(context.Background(), apiclient.Opts{Offline: true, OfflineFiles: files})
	if err != nil {
		fmt.Fprintln(os.Stderr, "argolint: offline client:", err)
		os.Exit(1)
	}
	kinds := []string{wf.WorkflowPlural, wf.WorkflowTemplatePlural, wf.CronWorkflowPlural, wf.ClusterWorkflowTemplatePlural}
	// RunLint exits 1 itself when a file fails.
	err = lint.RunLint(ctx, client, kinds, "simple", true, lint.LintOptions{Files: files, Strict: true, Printer: os.Stdout})
	if err != nil {
		fmt.Fprintln(os.Stderr, "argolint:", err)
		os.Exit(1)
	}
	if failed {
		os.Exit(1)
	}
}

// checkLax decodes the file into Argo's type for its kind, ignoring unknown
// fields, and fails when a key of the file is not in the re-encoded object.
func checkLax(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var raw map[string]any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("bad YAML: %w", err)
	}
	var obj any
	switch raw["kind"] {
	case wf.CronWorkflowKind:
		obj = &wfv1.CronWorkflow{}
	case wf.WorkflowTemplateKind:
		obj = &wfv1.WorkflowTemplate{}
	case wf.WorkflowKind:
		obj = &wfv1.Workflow{}
	default:
		return fmt.Errorf("kind %v: want CronWorkflow, WorkflowTemplate or Workflow", raw["kind"])
	}
	if err := yaml.Unmarshal(data, obj); err != nil {
		return fmt.Errorf("decode as %v: %w", raw["kind"], err)
	}
	js, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	var back map[string]any
	if err := json.Unmarshal(js, &back); err != nil {
		return err
	}
	var lost []string
	missing("", raw, back, &lost)
	if len(lost) > 0 {
		slices.Sort(lost)
		return fmt.Errorf("Argo's types drop %q (the controller would ignore them)", lost)
	}
	return nil
}

// missing appends the key paths of want that got does not have.
func missing(path string, want, got any, out *[]string) {
	switch w := want.(type) {
	case map[string]any:
		g, _ := got.(map[string]any)
		for k, v := range w {
			gv, ok := g[k]
			if !ok {
				*out = append(*out, join(path, k))
				continue
			}
			missing(join(path, k), v, gv, out)
		}
	case []any:
		g, _ := got.([]any)
		for i, v := range w {
			if i >= len(g) {
				*out = append(*out, path+"["+strconv.Itoa(i)+"]")
				continue
			}
			missing(path+"["+strconv.Itoa(i)+"]", v, g[i], out)
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
