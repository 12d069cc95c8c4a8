package openlineage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/weirhq/weir/routes/redact"
)

// Transport sends events somewhere.
type Transport interface {
	Emit(ctx context.Context, e RunEvent) error
}

// FromEnv returns the transport the environment configures, or nil when
// it configures none (or OPENLINEAGE_DISABLED is true). console writes to
// stderr. A bad configuration is an error; the caller logs it.
func FromEnv(getenv func(string) string, stderr io.Writer) (Transport, error) {
	if b, _ := strconv.ParseBool(getenv("OPENLINEAGE_DISABLED")); b {
		return nil, nil
	}
	tv := func(k string) string { return getenv("OPENLINEAGE__TRANSPORT__" + k) }
	switch typ := strings.ToLower(tv("TYPE")); typ {
	case "http":
		return newHTTP(tv("URL"), tv("ENDPOINT"), tv("AUTH__API_KEY"), tv("TIMEOUT"))
	case "file":
		if tv("LOG_FILE_PATH") == "" {
			return nil, fmt.Errorf("openlineage: file transport: OPENLINEAGE__TRANSPORT__LOG_FILE_PATH is not set")
		}
		appendTo, _ := strconv.ParseBool(tv("APPEND"))
		return &fileTransport{path: tv("LOG_FILE_PATH"), append: appendTo}, nil
	case "console":
		return &writerTransport{w: stderr}, nil
	case "":
		if u := getenv("OPENLINEAGE_URL"); u != "" {
			return newHTTP(u, getenv("OPENLINEAGE_ENDPOINT"), getenv("OPENLINEAGE_API_KEY"), "")
		}
		return nil, nil
	default:
		return nil, fmt.Errorf("openlineage: transport type %q: weir speaks http, file and console", typ)
	}
}

// httpTransport POSTs each event as JSON to url/endpoint.
type httpTransport struct {
	url, apiKey string
	client      *http.Client
}

func newHTTP(base, endpoint, apiKey, timeout string) (*httpTransport, error) {
	if base == "" {
		return nil, fmt.Errorf("openlineage: http transport: no URL (OPENLINEAGE_URL or OPENLINEAGE__TRANSPORT__URL)")
	}
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	d := 5 * time.Second
	if timeout != "" {
		s, err := strconv.ParseFloat(timeout, 64)
		if err != nil || s <= 0 {
			return nil, fmt.Errorf("openlineage: http transport: timeout %q is not a number of seconds", timeout)
		}
		d = time.Duration(s * float64(time.Second))
	}
	return &httpTransport{url: strings.TrimSuffix(base, "/") + "/" + strings.TrimPrefix(endpoint, "/"), apiKey: apiKey,
		client: &http.Client{Timeout: d}}, nil
}

func (t *httpTransport) Emit(ctx context.Context, e RunEvent) error {
	body, err := json.Marshal(e)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("openlineage: %s", redact.String(err.Error()))
	}
	req.Header.Set("Content-Type", "application/json")
	if t.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+t.apiKey)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return fmt.Errorf("openlineage: %s", redact.String(err.Error()))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("openlineage: %s answered %s: %s", redact.String(t.url), resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}

// fileTransport appends one event per line to path (append), or writes
// each event to a file of its own, path-<time>.json, as the OpenLineage
// clients' file transport does.
type fileTransport struct {
	path   string
	append bool
}

func (t *fileTransport) Emit(_ context.Context, e RunEvent) error {
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	path := t.path
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if !t.append {
		path = fmt.Sprintf("%s-%s.json", t.path, time.Now().UTC().Format("20060102-150405.000000"))
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return fmt.Errorf("openlineage: %w", err)
	}
	_, err = f.Write(append(line, '\n'))
	return errorsJoin(err, f.Close())
}

// writerTransport writes one event per line (console).
type writerTransport struct{ w io.Writer }

func (t *writerTransport) Emit(_ context.Context, e RunEvent) error {
	return json.NewEncoder(t.w).Encode(e)
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
