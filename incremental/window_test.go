package incremental

import (
	"errors"
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
	if _, err := cursorColumn(noPK, ""); !errors.Is(err, routes.ErrBadInput) {
		t.Fatalf("no primary key and no --cursor: want bad input, got %v", err)
	}
	if _, err := cursorColumn(noPK, "missing"); !errors.Is(err, routes.ErrBadInput) {
		t.Fatalf("missing cursor column: want bad input, got %v", err)
	}
	if c, err := cursorColumn(noPK, "a"); c != "a" || err != nil {
		t.Fatalf("cursorColumn = %q, %v", c, err)
	}
}
