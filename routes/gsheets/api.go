package gsheets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	sheets "google.golang.org/api/sheets/v4"

	"github.com/weirhq/weir/routes"
)

// api is the Sheets v4 client with weir's retry rule around each call.
type api struct {
	svc *sheets.Service
	id  string // the spreadsheet
}

// maxAttempts bounds the tries of one request through rate limits and
// server errors; firstBackoff doubles after each (tests shorten it).
const maxAttempts = 6

var firstBackoff = time.Second

// newAPI opens the client: with endpoint (a test peer) and no token or
// credentials, unauthenticated; else a token, the credentials file, or
// Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS first).
func newAPI(ctx context.Context, c config) (*api, error) {
	opts := []option.ClientOption{option.WithScopes(sheets.SpreadsheetsReadonlyScope)}
	if c.endpoint != "" {
		opts = append(opts, option.WithEndpoint(strings.TrimSuffix(c.endpoint, "/")+"/"))
	}
	switch {
	case c.token != "":
		opts = append(opts, option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: c.token, TokenType: "Bearer"})))
	case c.credentials != "":
		if err := serviceAccountFile(c.credentials); err != nil {
			return nil, routes.BadInput("gsheets: credentials file: %v (want a service account key file: JSON with \"type\": \"service_account\")", err)
		}
		opts = append(opts, option.WithAuthCredentialsFile(option.ServiceAccount, c.credentials))
	case c.endpoint != "":
		opts = append(opts, option.WithoutAuthentication())
	}
	svc, err := sheets.NewService(ctx, opts...)
	if err != nil {
		if c.token == "" && c.credentials == "" {
			return nil, routes.BadInput("gsheets: no Google credentials (%v): pass credentials=/path/key.json, set GOOGLE_APPLICATION_CREDENTIALS, or run gcloud auth application-default login", err)
		}
		return nil, fmt.Errorf("gsheets client: %w", err)
	}
	return &api{svc: svc, id: c.id}, nil
}

// serviceAccountFile checks that path is a service account key.
func serviceAccountFile(path string) error {
	b, err := os.ReadFile(path)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err // the path is credentials=, which messages never show
	}
	if err != nil {
		return err
	}
	var f struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("not a JSON key file: %v", err)
	}
	if f.Type != string(option.ServiceAccount) {
		return fmt.Errorf("type %q", f.Type)
	}
	return nil
}

// tabs lists the spreadsheet's sheets with their grid sizes.
func (a *api) tabs(ctx context.Context) ([]*sheets.Sheet, error) {
	var ss *sheets.Spreadsheet
	err := a.call(ctx, "list the tabs", func() (err error) {
		ss, err = a.svc.Spreadsheets.Get(a.id).Fields("sheets.properties(title,sheetType,gridProperties(rowCount,columnCount))").Context(ctx).Do()
		return err
	})
	if err != nil {
		return nil, a.refused(err, "")
	}
	return ss.Sheets, nil
}

// values reads one A1 range, rows major.
func (a *api) values(ctx context.Context, rng string, typed bool) ([][]any, error) {
	var vr *sheets.ValueRange
	err := a.call(ctx, "read "+rng, func() (err error) {
		call := a.svc.Spreadsheets.Values.Get(a.id, rng).MajorDimension("ROWS").Context(ctx)
		if typed {
			call = call.ValueRenderOption("UNFORMATTED_VALUE").DateTimeRenderOption("FORMATTED_STRING")
		} else {
			call = call.ValueRenderOption("FORMATTED_VALUE")
		}
		vr, err = call.Do()
		return err
	})
	if err != nil {
		return nil, a.refused(err, rng)
	}
	out := make([][]any, len(vr.Values))
	for i, row := range vr.Values {
		out[i] = row
	}
	return out, nil
}

// refused turns an API error into bad input when the spreadsheet does not
// exist or the credentials are refused, else wraps it. Messages name the
// spreadsheet, never a credential.
func (a *api) refused(err error, rng string) error {
	what := "spreadsheet " + a.id
	if rng != "" {
		what += " range " + rng
	}
	switch code(err) {
	case http.StatusNotFound:
		return routes.BadInput("gsheets: %s does not exist (404): check the ID in the URL (the part of the sheet's address between /d/ and /edit)", "spreadsheet "+a.id)
	case http.StatusUnauthorized:
		return routes.BadInput("gsheets: Google refused the credentials for %s (401): check credentials=, GOOGLE_APPLICATION_CREDENTIALS or token=", what)
	case http.StatusForbidden:
		return routes.BadInput("gsheets: no access to %s (403): share the spreadsheet with the service account's client_email (Viewer is enough), or use credentials that can open it", what)
	}
	return fmt.Errorf("gsheets %s: %w", what, err)
}

// code is an API error's HTTP status, 0 for none, -1 for a non-HTTP error.
func code(err error) int {
	if err == nil {
		return 0
	}
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Code
	}
	return -1
}

// call runs one request, retrying what a wait can fix: 429 (and
// RESOURCE_EXHAUSTED) and 5xx, with exponential backoff from
// firstBackoff (Retry-After when the server sends one), at most
// maxAttempts tries. Each wait is logged, so a run that must wait says
// so; a cancelled ctx ends the wait at once.
func (a *api) call(ctx context.Context, what string, fn func() error) error {
	backoff := firstBackoff
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil {
			return nil
		}
		why, ok := retryable(err)
		if !ok || ctx.Err() != nil {
			return err
		}
		if attempt == maxAttempts {
			return fmt.Errorf("%s: still %s after %d tries: %w", what, why, attempt, err)
		}
		wait := backoff
		if d, ok := retryAfter(err); ok {
			wait = d
		}
		slog.WarnContext(ctx, "gsheets: waiting before retrying", "spreadsheet", a.id, "request", what, "reason", why, "wait", wait.String(), "attempt", attempt)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: waiting out %s: %w", what, why, ctx.Err())
		case <-t.C:
		}
		backoff *= 2
	}
}

// retryable says why a retry may fix err.
func retryable(err error) (string, bool) {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return "", false
	}
	switch {
	case ge.Code == http.StatusTooManyRequests:
		return "rate limited (429)", true
	case strings.Contains(ge.Body, "RESOURCE_EXHAUSTED"):
		return fmt.Sprintf("over quota (%d RESOURCE_EXHAUSTED)", ge.Code), true
	case ge.Code >= 500:
		return fmt.Sprintf("failing (%d)", ge.Code), true
	}
	return "", false
}

// retryAfter is the server's Retry-After, in seconds, when it sent one.
func retryAfter(err error) (time.Duration, bool) {
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Header == nil {
		return 0, false
	}
	s, perr := strconv.Atoi(ge.Header.Get("Retry-After"))
	if perr != nil || s < 0 {
		return 0, false
	}
	return time.Duration(s) * time.Second, true
}
