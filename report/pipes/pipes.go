// Package pipes speaks the external-process side of Dagster Pipes
// (protocol version 0.1): it reads the context Dagster injects into a
// process it launches (PipesSubprocessClient, PipesK8sClient) and writes
// the messages Dagster reads back — opened, log,
// report_asset_materialization, report_asset_check, closed — as one JSON
// object per line.
//
// The bootstrap is two environment variables, each the base64 of the
// zlib-compressed JSON of a params object:
//
//   - DAGSTER_PIPES_CONTEXT: {"path": FILE} (the context is the JSON in
//     FILE) or {"data": {...}} (the context itself);
//   - DAGSTER_PIPES_MESSAGES: {"path": FILE} (append messages to FILE),
//     {"stdio": "stderr"|"stdout"} (write them to that stream) or
//     {"buffered_stdio": "stderr"|"stdout"} (write them there on Close).
package pipes

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
)

// ProtocolVersion is the Pipes protocol version weir speaks.
const ProtocolVersion = "0.1"

// The bootstrap environment variables.
const (
	EnvContext  = "DAGSTER_PIPES_CONTEXT"
	EnvMessages = "DAGSTER_PIPES_MESSAGES"
)

// Context is what Dagster tells the process about the step it runs.
type Context struct {
	AssetKeys   []string       `json:"asset_keys"` // "a/b/c" user strings; nil when the step targets no asset
	RunID       string         `json:"run_id"`
	JobName     string         `json:"job_name"`
	RetryNumber int            `json:"retry_number"`
	Extras      map[string]any `json:"extras"`
}

// Value is a typed metadata value ({"raw_value": …, "type": …}).
type Value struct {
	Raw  any    `json:"raw_value"`
	Type string `json:"type"`
}

// Int, Float, Text, Bool and JSON make metadata values of Pipes' types.
func Int(n int64) Value     { return Value{Raw: n, Type: "int"} }
func Float(f float64) Value { return Value{Raw: f, Type: "float"} }
func Text(s string) Value   { return Value{Raw: s, Type: "text"} }
func Bool(b bool) Value     { return Value{Raw: b, Type: "bool"} }
func JSON(v any) Value      { return Value{Raw: v, Type: "json"} }

// Metadata is the metadata of a materialization or a check.
type Metadata map[string]Value

// ContractCheck is the name of the asset check of a task's contract, in
// weir's messages and in the generated Dagster code that declares it.
const ContractCheck = "contract"

// Severities of a failed asset check.
const (
	SeverityWarn  = "WARN"
	SeverityError = "ERROR"
)

// Session is an open Pipes connection. Its methods are safe for
// concurrent use; after Close they do nothing.
type Session struct {
	Context Context

	mu       sync.Mutex
	w        io.Writer
	file     *os.File      // the messages file, when params name one
	buffered *bytes.Buffer // buffered_stdio: flushed to w on Close
	closed   bool
	err      error // the first write error
}

// Open starts a Pipes session when the environment holds the bootstrap
// (DAGSTER_PIPES_CONTEXT set); it returns nil, nil when it does not.
// stdout and stderr are the streams stdio params name. The "opened"
// message is written before Open returns.
func Open(getenv func(string) (string, bool), stdout, stderr io.Writer) (*Session, error) {
	rawCtx, ok := getenv(EnvContext)
	if !ok {
		return nil, nil
	}
	rawMsg, ok := getenv(EnvMessages)
	if !ok {
		return nil, fmt.Errorf("dagster pipes: %s is set but %s is not", EnvContext, EnvMessages)
	}
	var ctxParams, msgParams map[string]any
	if err := DecodeParam(rawCtx, &ctxParams); err != nil {
		return nil, fmt.Errorf("dagster pipes: %s: %w", EnvContext, err)
	}
	if err := DecodeParam(rawMsg, &msgParams); err != nil {
		return nil, fmt.Errorf("dagster pipes: %s: %w", EnvMessages, err)
	}
	s := &Session{}
	if err := s.loadContext(ctxParams); err != nil {
		return nil, err
	}
	if err := s.openWriter(msgParams, stdout, stderr); err != nil {
		return nil, err
	}
	s.write("opened", map[string]any{"extras": map[string]any{}})
	return s, s.Err()
}

// loadContext reads the context from params: "path" (a JSON file) or
// "data" (the context inline).
func (s *Session) loadContext(params map[string]any) error {
	var data []byte
	switch {
	case params["path"] != nil:
		path, ok := params["path"].(string)
		if !ok {
			return fmt.Errorf("dagster pipes: context param path is %T, not a string", params["path"])
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("dagster pipes: context: %w", err)
		}
		data = b
	case params["data"] != nil:
		b, err := json.Marshal(params["data"])
		if err != nil {
			return fmt.Errorf("dagster pipes: context data: %w", err)
		}
		data = b
	default:
		return fmt.Errorf("dagster pipes: context params have neither path nor data: %v", keys(params))
	}
	if err := json.Unmarshal(data, &s.Context); err != nil {
		return fmt.Errorf("dagster pipes: context: %w", err)
	}
	return nil
}

// openWriter picks the messages channel from params: "path",
// "stdio" or "buffered_stdio".
func (s *Session) openWriter(params map[string]any, stdout, stderr io.Writer) error {
	stream := func(key string) (io.Writer, error) {
		switch params[key] {
		case "stdout":
			return stdout, nil
		case "stderr":
			return stderr, nil
		}
		return nil, fmt.Errorf("dagster pipes: messages param %s=%v: want stdout or stderr", key, params[key])
	}
	switch {
	case params["path"] != nil:
		path, ok := params["path"].(string)
		if !ok {
			return fmt.Errorf("dagster pipes: messages param path is %T, not a string", params["path"])
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("dagster pipes: messages: %w", err)
		}
		s.file, s.w = f, f
	case params["stdio"] != nil:
		w, err := stream("stdio")
		if err != nil {
			return err
		}
		s.w = w
	case params["buffered_stdio"] != nil:
		w, err := stream("buffered_stdio")
		if err != nil {
			return err
		}
		s.buffered, s.w = &bytes.Buffer{}, w
	default:
		return fmt.Errorf("dagster pipes: messages params have neither path nor stdio: %v", keys(params))
	}
	return nil
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// write sends one message; the first error is kept for Err.
func (s *Session) write(method string, params any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	line, err := json.Marshal(map[string]any{"__dagster_pipes_version": ProtocolVersion, "method": method, "params": params})
	if err != nil {
		s.err = cmpErr(s.err, fmt.Errorf("dagster pipes: %s: %w", method, err))
		return
	}
	line = append(line, '\n')
	if s.buffered != nil {
		s.buffered.Write(line)
		return
	}
	if _, err := s.w.Write(line); err != nil {
		s.err = cmpErr(s.err, fmt.Errorf("dagster pipes: writing %s: %w", method, err))
	}
}

func cmpErr(old, err error) error {
	if old != nil {
		return old
	}
	return err
}

// Err returns the first error writing a message.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Log sends a log line; level is a Python logging level name (INFO,
// WARNING, ERROR).
func (s *Session) Log(level, message string) {
	s.write("log", map[string]any{"message": message, "level": level})
}

// Materialization reports that asset key was materialized.
func (s *Session) Materialization(key string, meta Metadata) {
	s.write("report_asset_materialization", map[string]any{"asset_key": key, "data_version": nil, "metadata": meta})
}

// Check reports the result of the asset check name on asset key.
func (s *Session) Check(key, name string, passed bool, severity string, meta Metadata) {
	s.write("report_asset_check", map[string]any{"asset_key": key, "check_name": name, "passed": passed,
		"severity": severity, "metadata": meta})
}

// Close sends "closed" — with the exception when runErr is not nil — and
// closes the messages channel. It returns the first write error.
func (s *Session) Close(runErr error) error {
	params := map[string]any{}
	if runErr != nil {
		params["exception"] = exception(runErr)
	}
	s.write("closed", params)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.err
	}
	s.closed = true
	if s.buffered != nil {
		if _, err := s.w.Write(s.buffered.Bytes()); err != nil {
			s.err = cmpErr(s.err, fmt.Errorf("dagster pipes: flushing messages: %w", err))
		}
	}
	if s.file != nil {
		s.err = cmpErr(s.err, s.file.Close())
	}
	return s.err
}

// exception is the PipesException of an error: its message, and the
// errors it wraps as the cause chain. Go errors carry no stack.
func exception(err error) map[string]any {
	e := map[string]any{"message": err.Error(), "stack": []string{}, "name": fmt.Sprintf("%T", err), "cause": nil, "context": nil}
	if inner := errors.Unwrap(err); inner != nil {
		e["cause"] = exception(inner)
	}
	return e
}

var keyPartRE = regexp.MustCompile(`[^A-Za-z0-9_]`)

// KeyPart makes s a valid Dagster asset key part: other characters become
// _ (in/orders.csv → in_orders_csv). weir's generated Dagster code and its
// Pipes messages name a table's asset with the same parts.
func KeyPart(s string) string { return keyPartRE.ReplaceAllString(s, "_") }

// AssetKey is the user string of an asset key: its parts joined by "/",
// with "/" and "\" in a part escaped by "\".
func AssetKey(parts []string) string {
	esc := make([]string, len(parts))
	for i, p := range parts {
		p = strings.ReplaceAll(p, `\`, `\\`)
		esc[i] = strings.ReplaceAll(p, "/", `\/`)
	}
	return strings.Join(esc, "/")
}

// EncodeParam is the bootstrap encoding of v: base64 of zlib of JSON.
func EncodeParam(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// DecodeParam undoes EncodeParam into v.
func DecodeParam(s string, v any) error {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("not base64: %w", err)
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("not zlib: %w", err)
	}
	defer zr.Close()
	b, err := io.ReadAll(zr)
	if err != nil {
		return fmt.Errorf("not zlib: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return nil
}
