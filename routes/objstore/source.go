package objstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/fileformat"
)

// dataFile is one file of a source table.
type dataFile struct {
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	Format string `json:"format"`
	Rows   int64  `json:"rows,omitempty"`
}

// resolved is what a table name points at: a weir table (its manifest), a
// single data file, or a folder of data files.
type resolved struct {
	path     string
	manifest *Manifest
	files    []dataFile
}

// formatOf picks a file's format by its extension, else the URL's.
func formatOf(key, fallback string) string {
	k := strings.ToLower(key)
	switch {
	case strings.HasSuffix(k, ".parquet") || strings.HasSuffix(k, ".parq") || strings.HasSuffix(k, ".pq"):
		return fileformat.Parquet
	case strings.HasSuffix(k, ".csv.gz"):
		return fileformat.CSVGzip
	case strings.HasSuffix(k, ".csv"):
		return fileformat.CSV
	}
	return fallback
}

func isDataFile(key string) bool { return formatOf(key, "") != "" }

// resolve finds a table: a manifest in the folder first, then an object of
// that name, then the data files under that folder.
func (e *Endpoint) resolve(ctx context.Context, ref routes.TableRef) (*resolved, error) {
	p, err := tablePath(ref)
	if err != nil {
		return nil, err
	}
	m, _, found, err := loadManifest(ctx, e.store, p)
	if err != nil {
		return nil, err
	}
	if found {
		return fromManifest(p, m), nil
	}
	b, err := e.store.Open(ctx, p)
	if err == nil {
		defer b.Close()
		return &resolved{path: p, files: []dataFile{{Key: p, Size: b.Size(), Format: formatOf(p, e.set.format)}}}, nil
	}
	if !errors.Is(err, errNotExist) {
		return nil, fmt.Errorf("open %s: %w", e.describe(p), err)
	}
	return e.resolveFolder(ctx, ref, p)
}

func fromManifest(p string, m *Manifest) *resolved {
	r := &resolved{path: p, manifest: m}
	for _, f := range m.Files {
		r.files = append(r.files, dataFile{Key: joinKey(p, f.Path), Size: f.Bytes, Format: m.Format, Rows: f.Rows})
	}
	return r
}

// resolveFolder lists the data files under p, skipping hidden names (_x,
// .x) the way Spark and Hive do.
func (e *Endpoint) resolveFolder(ctx context.Context, ref routes.TableRef, p string) (*resolved, error) {
	objs, err := e.store.List(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", e.describe(p), err)
	}
	r := &resolved{path: p}
	for _, o := range objs {
		rel := strings.TrimPrefix(o.Key, p+"/")
		if strings.HasPrefix(rel, runPrefix) || rel == LockName {
			return nil, e.notFound(ref, p, "a weir table folder with no committed run (no "+ManifestName+")")
		}
		if hidden(rel) || !isDataFile(rel) {
			continue
		}
		r.files = append(r.files, dataFile{Key: o.Key, Size: o.Size, Format: formatOf(o.Key, e.set.format)})
	}
	if len(r.files) == 0 {
		return nil, e.notFound(ref, p, "no such object, weir table or folder of .parquet/.csv/.csv.gz files")
	}
	for _, f := range r.files[1:] {
		if f.Format != r.files[0].Format {
			return nil, routes.BadInput("%s mixes %s and %s files; point the table at one kind", e.describe(p), r.files[0].Format, f.Format)
		}
	}
	return r, nil
}

func hidden(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if strings.HasPrefix(part, "_") || strings.HasPrefix(part, ".") {
			return true
		}
	}
	return false
}

func (e *Endpoint) notFound(ref routes.TableRef, p, problem string) error {
	return &routes.ProbeError{Table: ref.String(), Problem: e.describe(p) + ": " + problem, Err: routes.ErrNotFound,
		Hint: "table names are paths under the URL's prefix, like orders.parquet, in/orders.csv.gz or a folder"}
}

// Probe reads the table's schema: a weir table's from its manifest, a
// Parquet file's from its footer, a CSV file's by inference over its first
// InferRows rows (of the first file of a folder).
func (e *Endpoint) Probe(ctx context.Context, ref routes.TableRef) (*routes.TableInfo, error) {
	r, err := e.resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	schema, err := e.schemaOf(ctx, r)
	if err != nil {
		return nil, &routes.ProbeError{Table: ref.String(), Problem: "cannot read the schema of " + e.describe(r.path), Err: err}
	}
	info := &routes.TableInfo{Scheme: e.url.Scheme(), SourceID: e.url.Identity() + "#" + r.path, Ref: ref}
	if r.manifest == nil {
		info.Ref = stemRef(ref, r.path) // orders.csv and a folder in/orders.parquet load into a table named orders
	}
	for _, f := range schema.Fields() {
		native, _ := f.Metadata.GetValue(routes.MetaNativeType)
		info.Columns = append(info.Columns, routes.Column{Name: f.Name, Type: f.Type, Nullable: f.Nullable, NativeType: native})
	}
	if r.manifest != nil {
		info.PrimaryKey, info.RowEstimate = r.manifest.PrimaryKey, r.manifest.Rows
	}
	return info, nil
}

func (e *Endpoint) schemaOf(ctx context.Context, r *resolved) (*arrow.Schema, error) {
	if r.manifest != nil {
		return r.manifest.Schema()
	}
	f := r.files[0]
	if f.Format == fileformat.Parquet {
		return parquetSchema(ctx, e.store, f.Key)
	}
	return csvSchema(ctx, e.store, f)
}

// rangeSpec is a Range's Predicate: one file, or a run of its row groups.
type rangeSpec struct {
	File      dataFile `json:"file"`
	RowGroups []int    `json:"row_groups,omitempty"` // nil: all
}

// single reports a table that is one data file.
func (r *resolved) single() bool {
	return r.manifest == nil && len(r.files) == 1 && r.files[0].Key == r.path
}

// stemRef is the name a file or a folder of data files lands under: its
// stem (the last path element without a data extension: in/orders.csv.gz
// and the folder out/orders.parquet are orders, sales.2024.csv is
// sales.2024). A name that is already a stem (orders, public.orders) keeps
// the ref as parsed. Every file-like source (file, s3, gcs, github) names
// its tables by this one rule.
func stemRef(ref routes.TableRef, p string) routes.TableRef {
	if stem := baseName(p); stem != p {
		return routes.TableRef{Name: stem}
	}
	return ref
}

// baseName is a file's name without folders and data extensions.
func baseName(p string) string {
	name := path.Base(p)
	for _, ext := range []string{".csv.gz", ".csv", ".parquet", ".parq", ".pq"} {
		if len(name) > len(ext) && strings.EqualFold(name[len(name)-len(ext):], ext) {
			return name[:len(name)-len(ext)]
		}
	}
	return name
}

// pathOf returns the path a probed table was found at (Probe may have
// renamed a file's Ref to its base name; SourceID keeps the path).
func (e *Endpoint) pathOf(info *routes.TableInfo) routes.TableRef {
	if p, ok := strings.CutPrefix(info.SourceID, e.url.Identity()+"#"); ok {
		return routes.TableRef{Name: p}
	}
	return info.Ref
}

// Plan makes one range per file; when there are fewer Parquet files than
// pipes, big files are split by row groups so every pipe has work.
func (e *Endpoint) Plan(ctx context.Context, info *routes.TableInfo, opts routes.PlanOptions) ([]routes.Range, error) {
	r, err := e.resolve(ctx, e.pathOf(info))
	if err != nil {
		return nil, err
	}
	var specs []rangeSpec
	per := max(1, (opts.Pipes+len(r.files)-1)/max(len(r.files), 1))
	for _, f := range r.files {
		s, err := e.splitFile(ctx, f, per)
		if err != nil {
			return nil, err
		}
		specs = append(specs, s...)
	}
	ranges := make([]routes.Range, len(specs))
	for i, s := range specs {
		pred, _ := json.Marshal(s)
		ranges[i] = routes.Range{Table: info, Index: i, Count: len(specs), Predicate: string(pred), Label: s.label(e)}
	}
	return ranges, nil
}

func (s rangeSpec) label(e *Endpoint) string {
	if s.RowGroups == nil {
		return e.describe(s.File.Key)
	}
	return fmt.Sprintf("%s row groups %d..%d", e.describe(s.File.Key), s.RowGroups[0], s.RowGroups[len(s.RowGroups)-1])
}

func (e *Endpoint) splitFile(ctx context.Context, f dataFile, parts int) ([]rangeSpec, error) {
	if parts <= 1 || f.Format != fileformat.Parquet {
		return []rangeSpec{{File: f}}, nil
	}
	n, err := parquetRowGroups(ctx, e.store, f.Key)
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", e.describe(f.Key), err)
	}
	if n <= 1 {
		return []rangeSpec{{File: f}}, nil
	}
	var out []rangeSpec
	parts = min(parts, n)
	for i := range parts {
		lo, hi := i*n/parts, (i+1)*n/parts
		rgs := make([]int, 0, hi-lo)
		for g := lo; g < hi; g++ {
			rgs = append(rgs, g)
		}
		out = append(out, rangeSpec{File: f, RowGroups: rgs})
	}
	return out, nil
}
