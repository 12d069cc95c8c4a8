//go:build cgo

package duck

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// Query (bridge.go: DuckDB's C Arrow functions, not duckdb-go's tagged
// API) reports errors from preparing, from starting, and from a chunk
// past the first; it streams instead of materializing; and a cancelled
// context interrupts a running query.
func TestBridge_QueryErrors(t *testing.T) {
	d := open(t)
	ctx := t.Context()
	for _, c := range []struct{ query, want string }{
		{"SELEC 1", "syntax error"},
		{"SELECT * FROM no_such_table", "no_such_table"},
		{"SELECT CAST('x' AS INTEGER)", "Conversion Error"},
		// Fails on a row far past the first chunk (2048 rows).
		{"SELECT CASE WHEN i = 50000 THEN error('boom at 50000') ELSE i END AS v FROM range(100000) t(i)", "boom at 50000"},
	} {
		err := drain(ctx, d, c.query)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error holding %q", c.query, err, c.want)
		}
	}
	// The connection still works after each failure.
	if err := drain(ctx, d, "SELECT 1 AS x"); err != nil {
		t.Fatal(err)
	}
}

func drain(ctx context.Context, d *DB, query string) error {
	r, err := d.Query(ctx, query)
	if err != nil {
		return err
	}
	defer r.Release()
	for r.Next() {
	}
	return r.Err()
}

func TestBridge_Streams(t *testing.T) {
	d := open(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	start := time.Now()
	// 10^11 rows: a materialized result would never arrive.
	r, err := d.Query(ctx, "SELECT i FROM range(100000000000) t(i)")
	if err != nil {
		t.Fatal(err)
	}
	if !r.Next() || r.RecordBatch().NumRows() == 0 {
		t.Fatalf("no first batch: %v", r.Err())
	}
	r.Release()
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("the first batch took %s", el)
	}
	if err := drain(ctx, d, "SELECT 42 AS x"); err != nil {
		t.Fatalf("after releasing a result mid-stream: %v", err)
	}
}

func TestBridge_CancelInterrupts(t *testing.T) {
	d := open(t)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := drain(ctx, d, "SELECT count(*) FROM range(100000000000) a(i), range(1000) b(j) WHERE i + j < 0")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled query: got %v, want context.DeadlineExceeded", err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("the interrupt took %s", el)
	}
	if err := drain(t.Context(), d, "SELECT 1 AS x"); err != nil {
		t.Fatalf("after an interrupt: %v", err)
	}
}
