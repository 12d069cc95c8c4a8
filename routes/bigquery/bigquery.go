package bigquery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	bq "cloud.google.com/go/bigquery"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/weirhq/weir/routes"
)

// Scheme is the URL scheme of this route.
const Scheme = "bigquery"

func init() {
	routes.RegisterScheme(routes.SchemeInfo{Name: Scheme, Destination: true, Modes: []routes.Mode{routes.ModeAppend, routes.ModeMerge}}, open)
}

// Endpoint is a BigQuery project and default dataset as a destination. It
// answers Probe and MaxCursor (routes.Prober, CursorSource) so an append
// run can resume from the rows a replace loaded; it is not a Source.
type Endpoint struct {
	client *bq.Client
	cfg    config
	url    *routes.URL
}

var (
	_ routes.Destination  = (*Endpoint)(nil)
	_ routes.StateReader  = (*Endpoint)(nil)
	_ routes.Prober       = (*Endpoint)(nil)
	_ routes.CursorSource = (*Endpoint)(nil)
)

func open(ctx context.Context, u *routes.URL) (routes.Endpoint, error) {
	cfg, err := parseConfig(u)
	if err != nil {
		return nil, err
	}
	opts, err := clientOptions(cfg)
	if err != nil {
		return nil, err
	}
	client, err := bq.NewClient(ctx, cfg.Project, opts...)
	if err != nil {
		return nil, fmt.Errorf("bigquery client for %s: %w", u, err)
	}
	client.Location = cfg.Location
	return &Endpoint{client: client, cfg: cfg, url: u}, nil
}

// clientOptions: an http:// endpoint (an emulator) goes without
// authentication; otherwise credentials_file, else Application Default
// Credentials.
func clientOptions(cfg config) ([]option.ClientOption, error) {
	var opts []option.ClientOption
	if cfg.Endpoint != "" {
		opts = append(opts, option.WithEndpoint(cfg.Endpoint))
		if strings.HasPrefix(cfg.Endpoint, "http://") {
			return append(opts, option.WithoutAuthentication()), nil
		}
	}
	if cfg.CredentialsFile != "" {
		typ, err := credentialsType(cfg.CredentialsFile)
		if err != nil {
			return nil, routes.BadInput("bigquery credentials_file %s: %v", cfg.CredentialsFile, err)
		}
		opts = append(opts, option.WithAuthCredentialsFile(typ, cfg.CredentialsFile))
	}
	return opts, nil
}

// credentialsType accepts the two kinds of key files a user hands weir: a
// service account key or gcloud's authorized-user ADC file.
func credentialsType(path string) (option.CredentialsType, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var f struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return "", fmt.Errorf("not a JSON key file: %v", err)
	}
	switch option.CredentialsType(f.Type) {
	case option.ServiceAccount:
		return option.ServiceAccount, nil
	case option.AuthorizedUser:
		return option.AuthorizedUser, nil
	}
	return "", fmt.Errorf("type %q: want service_account or authorized_user", f.Type)
}

// Close releases the client.
func (e *Endpoint) Close() error { return e.client.Close() }

// ref fills in the URL's dataset for an unqualified table.
func (e *Endpoint) ref(t routes.TableRef) (routes.TableRef, error) {
	if t.Schema == "" {
		t.Schema = e.cfg.Dataset
	}
	if t.Schema == "" {
		return t, routes.BadInput("bigquery table %s: no dataset; name it as dataset.table or put the dataset in the URL (bigquery://%s/DATASET)", t.Name, e.cfg.Project)
	}
	return t, nil
}

func (e *Endpoint) table(t routes.TableRef) *bq.Table {
	return e.client.Dataset(t.Schema).Table(t.Name)
}

// ident quotes a table as `project.dataset.table` for SQL.
func (e *Endpoint) ident(t routes.TableRef) string {
	return quoteIdent(e.cfg.Project + "." + t.Schema + "." + t.Name)
}

// ensureDataset creates the dataset (in the URL's location) if missing.
func (e *Endpoint) ensureDataset(ctx context.Context, name string) error {
	ds := e.client.Dataset(name)
	_, err := ds.Metadata(ctx)
	if httpCode(err) != http.StatusNotFound {
		return err
	}
	err = ds.Create(ctx, &bq.DatasetMetadata{Location: e.cfg.Location})
	if httpCode(err) == http.StatusConflict {
		return nil // created meanwhile
	}
	if err != nil {
		return fmt.Errorf("create dataset %s: %w", name, err)
	}
	return nil
}

// tableMeta returns a table's metadata, or nil if it does not exist.
func (e *Endpoint) tableMeta(ctx context.Context, t routes.TableRef) (*bq.TableMetadata, error) {
	md, err := e.table(t).Metadata(ctx)
	if httpCode(err) == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t, err)
	}
	return md, nil
}

// dropTable deletes a table; a missing one is fine.
func (e *Endpoint) dropTable(ctx context.Context, t routes.TableRef) error {
	err := e.table(t).Delete(ctx)
	if err != nil && httpCode(err) != http.StatusNotFound {
		return fmt.Errorf("drop %s: %w", t, err)
	}
	return nil
}

// httpCode is the HTTP status of an API error, 0 for other errors.
func httpCode(err error) int {
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		return gerr.Code
	}
	return 0
}

// runJob waits for a job and returns its error, if any.
func runJob(ctx context.Context, job *bq.Job, err error) error {
	if err != nil {
		return err
	}
	status, err := job.Wait(ctx)
	if err != nil {
		return err
	}
	return status.Err()
}
