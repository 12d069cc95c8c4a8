package pipes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Params as Python's dagster_pipes.encode_param writes them (json.dumps,
// zlib.compress, base64): the Go side must read them as they are.
func TestDecodeParam_Python(t *testing.T) {
	tests := []struct {
		encoded string
		want    map[string]any
	}{
		{"eJyrVipILMlQslJQ0i/JLdBPLqnQyyrOz1OqBQBpjQhu", map[string]any{"path": "/tmp/ctx.json"}},
		{"eJwdzMEKgCAQhOFXiTkHQsdeJULW3ENoBrsWSfjuacf5+JkXnjJhHl6QKmcbuGibCyIFNrrHm8Wc4lkU6zhArmR33wqQ29CBsxSbrsOxNJ4a8ZOF9D8NvbxRa/0AYYQiaA==",
			map[string]any{"data": map[string]any{"asset_keys": []any{"lake/silver/orders"}, "run_id": "abc", "retry_number": 2.0, "extras": map[string]any{"k": "v"}}}},
		{"eJyrViouScnMV7JSADFSi4qUagFBNAaS", map[string]any{"stdio": "stderr"}},
	}
	for _, tt := range tests {
		var got map[string]any
		if err := DecodeParam(tt.encoded, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("DecodeParam = %v, want %v", got, tt.want)
		}
		// and back: what Go encodes decodes to the same
		enc, err := EncodeParam(got)
		if err != nil {
			t.Fatal(err)
		}
		var again map[string]any
		if err := DecodeParam(enc, &again); err != nil || !reflect.DeepEqual(again, tt.want) {
			t.Errorf("round trip %v: %v %v", tt.want, again, err)
		}
	}
	for _, bad := range []string{"", "not base64!", "aGVsbG8=" /* base64, not zlib */} {
		var v any
		if err := DecodeParam(bad, &v); err == nil {
			t.Errorf("DecodeParam(%q) passed", bad)
		}
	}
}

func env(t *testing.T, ctxParams, msgParams any) func(string) (string, bool) {
	t.Helper()
	m := map[string]string{}
	for name, v := range map[string]any{EnvContext: ctxParams, EnvMessages: msgParams} {
		if v == nil {
			continue
		}
		enc, err := EncodeParam(v)
		if err != nil {
			t.Fatal(err)
		}
		m[name] = enc
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// TestOpen covers the bootstrap: no Pipes, each context and messages
// params form, and bad params.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	ctxFile := filepath.Join(dir, "ctx.json")
	os.WriteFile(ctxFile, []byte(`{"asset_keys": ["a/b"], "run_id": "r", "retry_number": 1, "extras": {"x": 1}}`), 0o644)
	data := map[string]any{"asset_keys": []string{"a/b"}, "run_id": "r", "retry_number": 1, "extras": map[string]any{"x": 1}}
	msgFile := filepath.Join(dir, "messages")
	tests := []struct {
		name           string
		ctx, msg       any
		wantErr        string
		wantOut        string // "file", "stdout", "stderr", "buffered"
		wantNilSession bool
	}{
		{name: "not under pipes", wantNilSession: true},
		{name: "context file, messages file", ctx: map[string]any{"path": ctxFile}, msg: map[string]any{"path": msgFile}, wantOut: "file"},
		{name: "context inline, stderr", ctx: map[string]any{"data": data}, msg: map[string]any{"stdio": "stderr"}, wantOut: "stderr"},
		{name: "stdout", ctx: map[string]any{"data": data}, msg: map[string]any{"stdio": "stdout"}, wantOut: "stdout"},
		{name: "buffered stdout", ctx: map[string]any{"data": data}, msg: map[string]any{"buffered_stdio": "stdout"}, wantOut: "buffered"},
		{name: "no messages", ctx: map[string]any{"data": data}, wantErr: EnvMessages},
		{name: "bad stream", ctx: map[string]any{"data": data}, msg: map[string]any{"stdio": "tty"}, wantErr: "stdout or stderr"},
		{name: "bad context params", ctx: map[string]any{"s3": "x"}, msg: map[string]any{"stdio": "stderr"}, wantErr: "neither path nor data"},
		{name: "missing context file", ctx: map[string]any{"path": filepath.Join(dir, "none")}, msg: map[string]any{"stdio": "stderr"}, wantErr: "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(msgFile)
			var stdout, stderr bytes.Buffer
			s, err := Open(env(t, tt.ctx, tt.msg), &stdout, &stderr)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantNilSession {
				if s != nil {
					t.Fatal("a session without the bootstrap")
				}
				return
			}
			if s.Context.RunID != "r" || s.Context.RetryNumber != 1 || !reflect.DeepEqual(s.Context.AssetKeys, []string{"a/b"}) || s.Context.Extras["x"] != 1.0 {
				t.Errorf("context %+v", s.Context)
			}
			s.Materialization("a/b", Metadata{"rows": Int(3)})
			if tt.wantOut == "buffered" && stdout.Len() > 0 {
				t.Errorf("buffered messages written before Close: %s", stdout.String())
			}
			if err := s.Close(fmt.Errorf("run: %w", errors.New("disk full"))); err != nil {
				t.Fatal(err)
			}
			s.Log("INFO", "after close") // ignored
			var out string
			switch tt.wantOut {
			case "file":
				b, _ := os.ReadFile(msgFile)
				out = string(b)
			case "stderr":
				out = stderr.String()
			default:
				out = stdout.String()
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			var methods []string
			for _, l := range lines {
				var m struct {
					Version string         `json:"__dagster_pipes_version"`
					Method  string         `json:"method"`
					Params  map[string]any `json:"params"`
				}
				if err := json.Unmarshal([]byte(l), &m); err != nil || m.Version != ProtocolVersion {
					t.Fatalf("line %q: %v", l, err)
				}
				methods = append(methods, m.Method)
				if m.Method == "closed" {
					exc, _ := m.Params["exception"].(map[string]any)
					cause, _ := exc["cause"].(map[string]any)
					if exc["message"] != "run: disk full" || cause["message"] != "disk full" {
						t.Errorf("closed %v: want the error and its cause", m.Params)
					}
				}
			}
			if want := []string{"opened", "report_asset_materialization", "closed"}; !reflect.DeepEqual(methods, want) {
				t.Errorf("methods %v, want %v", methods, want)
			}
		})
	}
}

func TestAssetKeyAndKeyPart(t *testing.T) {
	if got := AssetKey([]string{"lake", "silver", "orders"}); got != "lake/silver/orders" {
		t.Errorf("AssetKey = %q", got)
	}
	if got := AssetKey([]string{"a/b", `c\d`}); got != `a\/b/c\\d` {
		t.Errorf("AssetKey escapes = %q", got)
	}
	if got := KeyPart("in/orders.csv-2"); got != "in_orders_csv_2" {
		t.Errorf("KeyPart = %q", got)
	}
}
