package objstore

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
)

// Object names inside a table's folder (docs/objstore.md).
const (
	ManifestName = "_weir_manifest.json" // the table: written last, in one PUT
	LockName     = "_weir_lock.json"     // the lease of the run writing the table
	// StagingName is the folder, next to a table's folder, where runs write
	// their files before publishing them: "_" keeps it out of globs and
	// Hive/Spark discovery of the parent prefix.
	StagingName = "_weir_staging"
	runPrefix   = "run=" // the layout before staging: <table>/run=<id>/part-…
)

// stagingRoot is the folder holding the staged files of every run of the
// table in dir: <parent>/_weir_staging/<table base name>.
func stagingRoot(dir string) string {
	parent := path.Dir(dir)
	if parent == "." {
		parent = ""
	}
	return joinKey(parent, StagingName, path.Base(dir))
}

// partName is the name of a data file, published flat in the table's
// folder; the run id keeps names of runs apart so appends never collide.
func partName(runID string, pipe, n int, format string) string {
	return fmt.Sprintf("part-%s-%03d-%04d.%s", runID, pipe, n, format)
}

// partRE matches the data files weir publishes (partName): only those are
// ever swept from a table's folder.
var partRE = regexp.MustCompile(`^part-[0-9A-Za-z_-]+-[0-9]{3}-[0-9]{4,}\.(parquet|csv\.gz|csv)$`)

// runIDRE is what a run id may hold: it becomes part of object names.
var runIDRE = regexp.MustCompile(`^[0-9A-Za-z_-]{1,64}$`)

// ManifestVersion is the layout version a manifest declares.
const ManifestVersion = 1

// Manifest is a weir table on an object store: the files that make it up
// now, their schema and format, and the state of the runs that wrote it.
// Readers follow Files and nothing else.
type Manifest struct {
	Version     int              `json:"version"`
	Table       string           `json:"table"`
	Format      string           `json:"format"`
	Columns     []ManifestColumn `json:"columns"`
	ArrowSchema string           `json:"arrow_schema"` // base64 Arrow IPC schema message: exact types and metadata
	PrimaryKey  []string         `json:"primary_key,omitempty"`
	Rows        int64            `json:"rows"`
	Bytes       int64            `json:"bytes"`
	Files       []ManifestFile   `json:"files"`
	RunID       string           `json:"run_id"` // the run that wrote this manifest
	Mode        routes.Mode      `json:"mode"`
	CommittedAt time.Time        `json:"committed_at"`
	States      []ManifestState  `json:"states,omitempty"` // one per source
}

// ManifestColumn describes a column for people and other tools.
type ManifestColumn struct {
	Name       string `json:"name"`
	Type       string `json:"type"` // Arrow type, e.g. "decimal(12, 2)"
	Nullable   bool   `json:"nullable"`
	NativeType string `json:"native_type,omitempty"` // the source's type
}

// ManifestFile is one data file; Path is relative to the table's folder.
type ManifestFile struct {
	Path  string `json:"path"`
	Rows  int64  `json:"rows"`
	Bytes int64  `json:"bytes"`
	RunID string `json:"run_id"`
}

// ManifestState is routes.State as committed with the files.
type ManifestState struct {
	SourceID    string    `json:"source_id"`
	Cursor      string    `json:"cursor,omitempty"`
	Watermark   string    `json:"watermark,omitempty"`
	Position    string    `json:"position,omitempty"`
	RunID       string    `json:"run_id"`
	Rows        int64     `json:"rows"`
	CommittedAt time.Time `json:"committed_at"`
}

func manifestKey(dir string) string { return joinKey(dir, ManifestName) }
func lockKey(dir string) string     { return joinKey(dir, LockName) }

// loadManifest reads a table's manifest and its version; found is false
// when the table has none.
func loadManifest(ctx context.Context, s store, dir string) (m *Manifest, version string, found bool, err error) {
	b, version, err := s.Get(ctx, manifestKey(dir))
	if errors.Is(err, errNotExist) {
		return nil, "", false, nil
	}
	if err != nil {
		return nil, "", false, fmt.Errorf("read %s: %w", s.Describe(manifestKey(dir)), err)
	}
	m = new(Manifest)
	if err := json.Unmarshal(b, m); err != nil {
		return nil, "", false, fmt.Errorf("manifest %s is not valid JSON: %w", s.Describe(manifestKey(dir)), err)
	}
	if m.Version > ManifestVersion {
		return nil, "", false, fmt.Errorf("manifest %s has layout version %d; this weir reads up to %d (upgrade weir)", s.Describe(manifestKey(dir)), m.Version, ManifestVersion)
	}
	return m, version, true, nil
}

// Schema decodes the manifest's Arrow schema.
func (m *Manifest) Schema() (*arrow.Schema, error) {
	b, err := base64.StdEncoding.DecodeString(m.ArrowSchema)
	if err != nil {
		return nil, fmt.Errorf("manifest arrow_schema: %w", err)
	}
	s, err := flight.DeserializeSchema(b, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("manifest arrow_schema: %w", err)
	}
	return s, nil
}

// setSchema records the schema the data files were written with.
func (m *Manifest) setSchema(s *arrow.Schema) {
	m.ArrowSchema = base64.StdEncoding.EncodeToString(flight.SerializeSchema(s, memory.DefaultAllocator))
	m.Columns = m.Columns[:0]
	for _, f := range s.Fields() {
		native, _ := f.Metadata.GetValue(routes.MetaNativeType)
		m.Columns = append(m.Columns, ManifestColumn{Name: f.Name, Type: f.Type.String(), Nullable: f.Nullable, NativeType: native})
	}
}

// state returns the saved state of a source.
func (m *Manifest) state(sourceID string) (ManifestState, bool) {
	for _, s := range m.States {
		if s.SourceID == sourceID {
			return s, true
		}
	}
	return ManifestState{}, false
}

// putState replaces (or adds) a source's state.
func (m *Manifest) putState(st ManifestState) {
	for i := range m.States {
		if m.States[i].SourceID == st.SourceID {
			m.States[i] = st
			return
		}
	}
	m.States = append(m.States, st)
}

// LoadState returns the state the last commit into table from sourceID
// saved in the table's manifest.
func (e *Endpoint) LoadState(ctx context.Context, table routes.TableRef, sourceID string) (routes.State, bool, error) {
	dir, err := tablePath(table)
	if err != nil {
		return routes.State{}, false, err
	}
	m, _, found, err := loadManifest(ctx, e.store, dir)
	if err != nil || !found {
		return routes.State{}, false, err
	}
	st, ok := m.state(sourceID)
	if !ok {
		return routes.State{}, false, nil
	}
	return routes.State{SourceID: st.SourceID, Cursor: st.Cursor, Watermark: st.Watermark, Position: st.Position, RunID: st.RunID, Rows: st.Rows}, true, nil
}

// Manifest returns a table's current manifest; found is false when the
// table has none.
func (e *Endpoint) Manifest(ctx context.Context, table routes.TableRef) (m *Manifest, found bool, err error) {
	dir, err := tablePath(table)
	if err != nil {
		return nil, false, err
	}
	m, _, found, err = loadManifest(ctx, e.store, dir)
	return m, found, err
}

// Objects lists the keys of every object under a table's folder, relative
// to the URL's prefix (for tests and tools).
func (e *Endpoint) Objects(ctx context.Context, table routes.TableRef) ([]string, error) {
	dir, err := tablePath(table)
	if err != nil {
		return nil, err
	}
	objs, err := e.store.List(ctx, dir)
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = o.Key
	}
	return keys, err
}
