package incremental

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
)

func TestCompare(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"9", "10", -1},
		{"-5", "3", -1},
		{"12.50", "12.5", 0},
		{"18446744073709551615", "18446744073709551614", 1},
		{"2024-01-02 00:00:00.000000", "2024-01-01 23:59:59.999999", 1},
		{"2024-01-01 00:00:00.000000+00", "2024-01-01 00:00:00.000000+00", 0},
	}
	for _, tc := range tests {
		if got := Compare(tc.a, tc.b); got != tc.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestWindow(t *testing.T) {
	info := &routes.TableInfo{Ref: routes.TableRef{Schema: "s", Name: "t"}, PrimaryKey: []string{"id"},
		Columns: []routes.Column{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}}
	tests := []struct {
		name, after, until string
		empty, backwards   bool
	}{
		{"first run reads all", "", "100", false, false},
		{"new rows", "50", "100", false, false},
		{"nothing new", "100", "100", true, false},
		{"cursor went backwards", "100", "10", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := window(info, "id", tc.after, tc.until)
			if tc.backwards {
				if !errors.Is(err, routes.ErrBadInput) {
					t.Fatalf("want bad input, got %v", err)
				}
				return
			}
			if err != nil || w.Empty != tc.empty || w.After != tc.after || w.Until != tc.until {
				t.Fatalf("window = %+v, %v", w, err)
			}
		})
	}
}

func TestCursorColumn(t *testing.T) {
	noPK := &routes.TableInfo{Ref: routes.TableRef{Name: "t"}, Columns: []routes.Column{{Name: "a"}}}
	if _, err := CursorColumn(noPK, ""); !errors.Is(err, routes.ErrBadInput) {
		t.Fatalf("no primary key and no --cursor: want bad input, got %v", err)
	}
	if _, err := CursorColumn(noPK, "missing"); !errors.Is(err, routes.ErrBadInput) {
		t.Fatalf("missing cursor column: want bad input, got %v", err)
	}
	if c, err := CursorColumn(noPK, "a"); c != "a" || err != nil {
		t.Fatalf("cursorColumn = %q, %v", c, err)
	}
}

// TestWatermark_NullCountOncePerRun: a run decides its window twice (a
// first look, then under the lock); the NULL count of a nullable cursor
// is a count(*) on the source and runs in the first look only. A cursor
// with NULLs is refused there, before the lock, naming the count.
func TestWatermark_NullCountOncePerRun(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		nullable bool
		nulls    int64
		calls    int
		refused  bool
	}{
		{"not nullable: no count", false, 0, 0, false},
		{"nullable, no NULL: one count", true, 0, 1, false},
		{"nullable with NULLs: refused at the first count", true, 4, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeTable{nullable: tc.nullable, nulls: tc.nulls}
			f.add(1, 10)
			sink := sinkOnly{&fakeTable{}}
			spec := routes.CopySpec{Table: routes.TableRef{Name: "t"}, DestTable: routes.TableRef{Name: "sink"}, Mode: routes.ModeAppend, Window: Watermark(f, sink, "")}
			_, err := routes.Copy(ctx, f, sink, spec)
			var pe *routes.ProbeError
			if tc.refused != errors.As(err, &pe) || (!tc.refused && err != nil) {
				t.Fatalf("run: %v; refused = %v", err, tc.refused)
			}
			if tc.refused && !strings.Contains(err.Error(), "4 rows have a NULL cursor") {
				t.Fatalf("refusal %q does not name the 4 rows", err)
			}
			if f.nullCalls != tc.calls {
				t.Fatalf("NullCount ran %d times in one run, want %d", f.nullCalls, tc.calls)
			}
		})
	}
}

// sinkOnly is a destination that keeps state and is no source (so its
// watermark starts from nothing).
type sinkOnly struct{ f *fakeTable }

func (s sinkOnly) Close() error { return nil }
func (s sinkOnly) Prepare(ctx context.Context, info *routes.TableInfo, o routes.WriteOptions) (routes.Stage, error) {
	return s.f.Prepare(ctx, info, o)
}
func (s sinkOnly) LoadState(ctx context.Context, t routes.TableRef, id string) (routes.State, bool, error) {
	return s.f.LoadState(ctx, t, id)
}
