package icebergtest

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
)

// RESTServer is a test-only Iceberg REST catalog: the endpoints weir's
// REST path uses (config, namespaces, tables: list, create, load, commit,
// drop), served over HTTP by delegating to iceberg-go's SQL catalog on an
// SQLite file. A commit goes through the SQL catalog's CommitTable, which
// checks the commit's requirements (assert-ref-snapshot-id,
// assert-table-uuid, assert-current-schema-id…) against the current
// metadata and swaps the metadata location with a compare-and-set, so two
// concurrent commits conflict (HTTP 409) as on a real server.
//
// It is not a production REST catalog: no authentication, no vended
// credentials, no views, no multi-table transactions, no staged creates,
// no scan planning.
type RESTServer struct {
	URL   string // http://127.0.0.1:port, the catalog's base URI
	cat   *sqlcat.Catalog
	props iceberg.Properties // FileIO properties vended with each table
}

// restEndpoints is what /v1/config advertises; the client uses no other.
var restEndpoints = []string{
	"GET /v1/{prefix}/namespaces", "POST /v1/{prefix}/namespaces",
	"GET /v1/{prefix}/namespaces/{namespace}", "HEAD /v1/{prefix}/namespaces/{namespace}",
	"DELETE /v1/{prefix}/namespaces/{namespace}",
	"GET /v1/{prefix}/namespaces/{namespace}/tables", "POST /v1/{prefix}/namespaces/{namespace}/tables",
	"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}", "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}", "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
}

// StartRESTServer serves a REST catalog for the test, its SQL catalog in
// dbPath; props holds the warehouse and the FileIO properties (s3.*),
// which the server also hands to clients with each table, as real
// catalogs do.
func StartRESTServer(t testing.TB, dbPath string, props iceberg.Properties) *RESTServer {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+dbPath+"?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cat, err := sqlcat.NewCatalog("rest", db, sqlcat.SQLite, props)
	if err != nil {
		t.Fatalf("rest server catalog: %v", err)
	}
	s := &RESTServer{cat: cat, props: iceberg.Properties{}}
	for k, v := range props {
		if k != "warehouse" {
			s.props[k] = v
		}
	}
	srv := httptest.NewServer(s.routes())
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

func (s *RESTServer) routes() http.Handler {
	m := http.NewServeMux()
	m.HandleFunc("GET /v1/config", s.config)
	m.HandleFunc("GET /v1/namespaces", s.listNamespaces)
	m.HandleFunc("POST /v1/namespaces", s.createNamespace)
	m.HandleFunc("GET /v1/namespaces/{ns}", s.loadNamespace)
	m.HandleFunc("HEAD /v1/namespaces/{ns}", s.loadNamespace)
	m.HandleFunc("DELETE /v1/namespaces/{ns}", s.dropNamespace)
	m.HandleFunc("GET /v1/namespaces/{ns}/tables", s.listTables)
	m.HandleFunc("POST /v1/namespaces/{ns}/tables", s.createTable)
	m.HandleFunc("GET /v1/namespaces/{ns}/tables/{table}", s.loadTable)
	m.HandleFunc("HEAD /v1/namespaces/{ns}/tables/{table}", s.loadTable)
	m.HandleFunc("POST /v1/namespaces/{ns}/tables/{table}", s.commitTable)
	m.HandleFunc("DELETE /v1/namespaces/{ns}/tables/{table}", s.dropTable)
	return m
}

func (s *RESTServer) config(w http.ResponseWriter, r *http.Request) {
	reply(w, map[string]any{"defaults": map[string]string{}, "overrides": map[string]string{}, "endpoints": restEndpoints})
}

// namespace decodes the {ns} path segment: levels joined by 0x1F.
func namespace(r *http.Request) table.Identifier {
	return strings.Split(r.PathValue("ns"), "\x1f")
}

func tableIdent(r *http.Request) table.Identifier {
	return append(namespace(r), r.PathValue("table"))
}

func (s *RESTServer) listNamespaces(w http.ResponseWriter, r *http.Request) {
	nss, err := s.cat.ListNamespaces(r.Context(), nil)
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, map[string]any{"namespaces": nss})
}

func (s *RESTServer) createNamespace(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Namespace  table.Identifier   `json:"namespace"`
		Properties iceberg.Properties `json:"properties"`
	}
	if !decode(w, r, &req) {
		return
	}
	if err := s.cat.CreateNamespace(r.Context(), req.Namespace, req.Properties); err != nil {
		fail(w, err)
		return
	}
	reply(w, req)
}

func (s *RESTServer) loadNamespace(w http.ResponseWriter, r *http.Request) {
	props, err := s.cat.LoadNamespaceProperties(r.Context(), namespace(r))
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, map[string]any{"namespace": namespace(r), "properties": props})
}

func (s *RESTServer) dropNamespace(w http.ResponseWriter, r *http.Request) {
	if err := s.cat.DropNamespace(r.Context(), namespace(r)); err != nil {
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type restIdent struct {
	Namespace table.Identifier `json:"namespace"`
	Name      string           `json:"name"`
}

func (s *RESTServer) listTables(w http.ResponseWriter, r *http.Request) {
	ids := []restIdent{}
	for id, err := range s.cat.ListTables(r.Context(), namespace(r)) {
		if err != nil {
			fail(w, err)
			return
		}
		ids = append(ids, restIdent{Namespace: id[:len(id)-1], Name: id[len(id)-1]})
	}
	reply(w, map[string]any{"identifiers": ids})
}

func (s *RESTServer) createTable(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name          string                 `json:"name"`
		Schema        *iceberg.Schema        `json:"schema"`
		Location      string                 `json:"location"`
		PartitionSpec *iceberg.PartitionSpec `json:"partition-spec"`
		WriteOrder    *table.SortOrder       `json:"write-order"`
		StageCreate   bool                   `json:"stage-create"`
		Properties    iceberg.Properties     `json:"properties"`
	}
	if !decode(w, r, &req) {
		return
	}
	if req.StageCreate || req.Schema == nil {
		failStatus(w, http.StatusBadRequest, "BadRequestException", "staged creates are not supported; a schema is required")
		return
	}
	opts := []catalog.CreateTableOpt{catalog.WithProperties(req.Properties)}
	if req.Location != "" {
		opts = append(opts, catalog.WithLocation(req.Location))
	}
	if req.PartitionSpec != nil {
		opts = append(opts, catalog.WithPartitionSpec(req.PartitionSpec))
	}
	if req.WriteOrder != nil {
		opts = append(opts, catalog.WithSortOrder(*req.WriteOrder))
	}
	tbl, err := s.cat.CreateTable(r.Context(), append(namespace(r), req.Name), req.Schema, opts...)
	if err != nil {
		fail(w, err)
		return
	}
	s.replyTable(w, tbl.Metadata(), tbl.MetadataLocation())
}

func (s *RESTServer) loadTable(w http.ResponseWriter, r *http.Request) {
	tbl, err := s.cat.LoadTable(r.Context(), tableIdent(r))
	if err != nil {
		fail(w, err)
		return
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s.replyTable(w, tbl.Metadata(), tbl.MetadataLocation())
}

func (s *RESTServer) replyTable(w http.ResponseWriter, meta table.Metadata, loc string) {
	reply(w, map[string]any{"metadata-location": loc, "metadata": meta, "config": s.props})
}

// commitTable applies a commit through the SQL catalog, which validates
// the requirements and swaps the metadata atomically.
func (s *RESTServer) commitTable(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Requirements table.Requirements `json:"requirements"`
		Updates      table.Updates      `json:"updates"`
	}
	if !decode(w, r, &req) {
		return
	}
	meta, loc, err := s.cat.CommitTable(r.Context(), tableIdent(r), req.Requirements, req.Updates)
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, map[string]any{"metadata-location": loc, "metadata": meta})
}

func (s *RESTServer) dropTable(w http.ResponseWriter, r *http.Request) {
	drop := s.cat.DropTable
	if r.URL.Query().Get("purgeRequested") == "true" {
		drop = s.cat.PurgeTable
	}
	if err := drop(r.Context(), tableIdent(r)); err != nil {
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		failStatus(w, http.StatusBadRequest, "BadRequestException", err.Error())
		return false
	}
	return true
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// fail maps a catalog error to the REST spec's status and error type. A
// failed requirement or a lost compare-and-set is 409 CommitFailedException.
func fail(w http.ResponseWriter, err error) {
	msg := err.Error()
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable):
		failStatus(w, http.StatusNotFound, "NoSuchTableException", msg)
	case errors.Is(err, catalog.ErrNoSuchNamespace):
		failStatus(w, http.StatusNotFound, "NoSuchNamespaceException", msg)
	case errors.Is(err, catalog.ErrTableAlreadyExists), errors.Is(err, catalog.ErrNamespaceAlreadyExists):
		failStatus(w, http.StatusConflict, "AlreadyExistsException", msg)
	case errors.Is(err, catalog.ErrNamespaceNotEmpty):
		failStatus(w, http.StatusConflict, "NamespaceNotEmptyException", msg)
	case errors.Is(err, table.ErrCommitFailed), strings.Contains(strings.ToLower(msg), "requirement failed"):
		failStatus(w, http.StatusConflict, "CommitFailedException", msg)
	case errors.Is(err, context.Canceled):
		failStatus(w, http.StatusServiceUnavailable, "ServiceUnavailableException", msg)
	default:
		failStatus(w, http.StatusInternalServerError, "ServerErrorException", msg)
	}
}

func failStatus(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": code}})
}
