// Package openlineage emits OpenLineage RunEvents (START, COMPLETE, FAIL)
// for weir runs, to the transport the standard OpenLineage environment
// names (the variables of the OpenLineage clients):
//
//	OPENLINEAGE__TRANSPORT__TYPE   http | file | console (wins over OPENLINEAGE_URL)
//	OPENLINEAGE__TRANSPORT__URL, OPENLINEAGE__TRANSPORT__ENDPOINT (default api/v1/lineage),
//	OPENLINEAGE__TRANSPORT__AUTH__API_KEY, OPENLINEAGE__TRANSPORT__TIMEOUT (seconds, default 5)
//	OPENLINEAGE__TRANSPORT__LOG_FILE_PATH, OPENLINEAGE__TRANSPORT__APPEND (file)
//	OPENLINEAGE_URL, OPENLINEAGE_ENDPOINT, OPENLINEAGE_API_KEY   HTTP, when no type is set
//	OPENLINEAGE_DISABLED=true      emit nothing
//	OPENLINEAGE_NAMESPACE          the job namespace (default "weir")
//	OPENLINEAGE_PARENT_ID          namespace/name/runId of the parent run, or
//	OPENLINEAGE_PARENT_JOB_NAMESPACE, OPENLINEAGE_PARENT_JOB_NAME, OPENLINEAGE_PARENT_RUN_ID
//
// Emitting never fails a run: the caller logs the error and goes on.
package openlineage

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// The spec and facet versions the events follow.
const (
	Producer        = "https://github.com/weirhq/weir"
	SchemaURL       = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
	schemaFacetURL  = "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet"
	statsFacetURL   = "https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json#/$defs/OutputStatisticsOutputDatasetFacet"
	parentFacetURL  = "https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json#/$defs/ParentRunFacet"
	errorFacetURL   = "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet"
	DefaultEndpoint = "api/v1/lineage"
)

// The event types weir emits.
const (
	Start    = "START"
	Complete = "COMPLETE"
	Fail     = "FAIL"
)

// RunEvent is an OpenLineage RunEvent.
type RunEvent struct {
	EventType string    `json:"eventType"`
	EventTime string    `json:"eventTime"`
	Run       Run       `json:"run"`
	Job       Job       `json:"job"`
	Inputs    []Dataset `json:"inputs"`
	Outputs   []Dataset `json:"outputs"`
	Producer  string    `json:"producer"`
	SchemaURL string    `json:"schemaURL"`
}

// Run is the run an event is about.
type Run struct {
	RunID  string         `json:"runId"`
	Facets map[string]any `json:"facets,omitempty"`
}

// Job is the job a run instances.
type Job struct {
	Namespace string         `json:"namespace"`
	Name      string         `json:"name"`
	Facets    map[string]any `json:"facets,omitempty"`
}

// Dataset is an input or output dataset.
type Dataset struct {
	Namespace    string         `json:"namespace"`
	Name         string         `json:"name"`
	Facets       map[string]any `json:"facets,omitempty"`
	OutputFacets map[string]any `json:"outputFacets,omitempty"`
	InputFacets  map[string]any `json:"inputFacets,omitempty"`
}

// Field is a column of a dataset's schema facet.
type Field struct {
	Name string `json:"name"`
	Type string `json:"type,omitempty"`
}

// facet is the base every facet carries.
func facet(schemaURL string, body map[string]any) map[string]any {
	body["_producer"] = Producer
	body["_schemaURL"] = schemaURL
	return body
}

// WithSchema adds the schema facet.
func (d *Dataset) WithSchema(fields []Field) {
	if d.Facets == nil {
		d.Facets = map[string]any{}
	}
	d.Facets["schema"] = facet(schemaFacetURL, map[string]any{"fields": fields})
}

// WithRowCount adds the output statistics facet.
func (d *Dataset) WithRowCount(rows int64) {
	if d.OutputFacets == nil {
		d.OutputFacets = map[string]any{}
	}
	d.OutputFacets["outputStatistics"] = facet(statsFacetURL, map[string]any{"rowCount": rows})
}

// Parent is the run that started this one (an orchestrator's task run).
type Parent struct {
	Namespace, Name, RunID string
}

// ParentFromEnv reads the parent run from OPENLINEAGE_PARENT_ID
// (namespace/name/runId, the form Airflow's lineage_parent_id macro
// renders; the name may hold "/") or the three OPENLINEAGE_PARENT_*
// variables; ok is false when none is set or the run id is not a UUID.
func ParentFromEnv(getenv func(string) string) (Parent, bool) {
	p := Parent{Namespace: getenv("OPENLINEAGE_PARENT_JOB_NAMESPACE"), Name: getenv("OPENLINEAGE_PARENT_JOB_NAME"),
		RunID: getenv("OPENLINEAGE_PARENT_RUN_ID")}
	if id := getenv("OPENLINEAGE_PARENT_ID"); id != "" {
		first := strings.Index(id, "/")
		last := strings.LastIndex(id, "/")
		if first <= 0 || last <= first {
			return Parent{}, false
		}
		p = Parent{Namespace: id[:first], Name: id[first+1 : last], RunID: id[last+1:]}
	}
	if p.Namespace == "" || p.Name == "" || uuid.Validate(p.RunID) != nil {
		return Parent{}, false
	}
	return p, true
}

// RunInfo describes one run of a job for the events about it.
type RunInfo struct {
	RunID   string // a UUID (NewRunID)
	Job     Job
	Parent  *Parent
	Inputs  []Dataset
	Outputs []Dataset
}

// NewRunID returns a run id: a UUIDv7, as the spec recommends.
func NewRunID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}

// Event builds the event of type typ for the run at time t; runErr
// (FAIL) becomes the errorMessage run facet.
func (ri RunInfo) Event(typ string, t time.Time, runErr string) RunEvent {
	run := Run{RunID: ri.RunID, Facets: map[string]any{}}
	if ri.Parent != nil {
		run.Facets["parent"] = facet(parentFacetURL, map[string]any{
			"run": map[string]any{"runId": ri.Parent.RunID},
			"job": map[string]any{"namespace": ri.Parent.Namespace, "name": ri.Parent.Name},
		})
	}
	if runErr != "" {
		run.Facets["errorMessage"] = facet(errorFacetURL, map[string]any{"message": runErr, "programmingLanguage": "go"})
	}
	if len(run.Facets) == 0 {
		run.Facets = nil
	}
	return RunEvent{EventType: typ, EventTime: t.UTC().Format(time.RFC3339Nano), Run: run, Job: ri.Job,
		Inputs: nonNil(ri.Inputs), Outputs: nonNil(ri.Outputs), Producer: Producer, SchemaURL: SchemaURL}
}

func nonNil(d []Dataset) []Dataset {
	if d == nil {
		return []Dataset{}
	}
	return d
}

// String is a short description of an event for logs.
func (e RunEvent) String() string {
	return fmt.Sprintf("%s %s/%s run %s", e.EventType, e.Job.Namespace, e.Job.Name, e.Run.RunID)
}
