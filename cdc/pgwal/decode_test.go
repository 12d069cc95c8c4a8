package pgwal

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/jackc/pglogrepl"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

// col is one column of a test tuple: its kind and, for 't', its text.
type col struct {
	kind byte
	text string
}

func txt(s string) col { return col{'t', s} }

var (
	null    = col{kind: 'n'}
	toasted = col{kind: 'u'}
)

// tupleBytes renders a TupleData as pgoutput sends it.
func tupleBytes(cols ...col) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(len(cols)))
	for _, c := range cols {
		b = append(b, c.kind)
		if c.kind == 't' || c.kind == 'b' {
			b = append(binary.BigEndian.AppendUint32(b, uint32(len(c.text))), c.text...)
		}
	}
	return b
}

// message renders a row message: kind, relation id, then each tuple after
// its tag.
func message(kind byte, relID uint32, tuples ...any) []byte {
	b := binary.BigEndian.AppendUint32([]byte{kind}, relID)
	for _, t := range tuples {
		switch x := t.(type) {
		case byte:
			b = append(b, x)
		case []byte:
			b = append(b, x...)
		}
	}
	return b
}

// testDecoder captures table s.t (id int8, s text, n text, big text,
// blob bytea, flag bool) as relation 7, whose columns come in another
// order than the table's: id, flag, s, n, big, blob.
func testDecoder(t *testing.T) *decoder {
	t.Helper()
	tb := &table{Table: cdc.Table{
		Source:  routes.TableRef{Schema: "s", Name: "t"},
		Columns: []string{"id", "s", "n", "big", "blob", "flag"},
		Key:     []int{0},
		Info: &routes.TableInfo{Columns: []routes.Column{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String},
			{Name: "n", Type: arrow.BinaryTypes.String}, {Name: "big", Type: arrow.BinaryTypes.String},
			{Name: "blob", Type: arrow.BinaryTypes.Binary}, {Name: "flag", Type: arrow.FixedWidthTypes.Boolean},
		}},
	}}
	d := newDecoder([]*table{tb}, 0, false)
	rel := &pglogrepl.RelationMessage{RelationID: 7, Namespace: "s", RelationName: "t"}
	for _, n := range []string{"id", "flag", "s", "n", "big", "blob"} {
		rel.Columns = append(rel.Columns, &pglogrepl.RelationMessageColumn{Name: n})
	}
	if err := d.relation(rel); err != nil {
		t.Fatal(err)
	}
	d.inTx, d.commitPos = true, "00000000/00000010"
	return d
}

// TestDecodeTuples: row messages decoded straight from their bytes give
// the change pglogrepl's parse gave: every column kind ('n' NULL, 'u' an
// unchanged TOAST value, 't' text, including empty text and bytea with
// zero bytes), each tuple kind of each message, columns in the relation's
// order lined up with the table's, and columns the tuple lacks Unchanged.
func TestDecodeTuples(t *testing.T) {
	u := cdc.Unchanged
	full := tupleBytes(txt("42"), txt("t"), txt(""), null, toasted, txt(`\x0001ff00`))
	key := tupleBytes(txt("41"), null, null, null, null, null)
	for _, c := range []struct {
		name string
		msg  []byte
		want cdc.Change
	}{
		{"insert", message('I', 7, byte('N'), full),
			cdc.Change{Op: cdc.OpInsert, After: []any{"42", "", nil, u, []byte{0, 1, 0xff, 0}, true}}},
		{"insert, short tuple", message('I', 7, byte('N'), tupleBytes(txt("42"), txt("f"))),
			cdc.Change{Op: cdc.OpInsert, After: []any{"42", u, u, u, u, false}}},
		{"update", message('U', 7, byte('N'), full),
			cdc.Change{Op: cdc.OpUpdate, After: []any{"42", "", nil, u, []byte{0, 1, 0xff, 0}, true}}},
		{"update, key changed", message('U', 7, byte('K'), key, byte('N'), full),
			cdc.Change{Op: cdc.OpUpdate, Key: []any{"41"}, After: []any{"42", "", nil, u, []byte{0, 1, 0xff, 0}, true}}},
		{"update, whole old row", message('U', 7, byte('O'), tupleBytes(txt("42"), txt("f"), txt("é\t\n"), txt("x"), txt("big"), txt(`\x`)), byte('N'), full),
			cdc.Change{Op: cdc.OpUpdate, Key: []any{"42"},
				Before: []any{"42", "é\t\n", "x", "big", []byte{}, false},
				After:  []any{"42", "", nil, u, []byte{0, 1, 0xff, 0}, true}}},
		{"delete, key", message('D', 7, byte('K'), key),
			cdc.Change{Op: cdc.OpDelete, Key: []any{"41"}}},
		{"delete, whole old row", message('D', 7, byte('O'), full),
			cdc.Change{Op: cdc.OpDelete, Key: []any{"42"}, Before: []any{"42", "", nil, u, []byte{0, 1, 0xff, 0}, true}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := testDecoder(t)
			rel, got, err := d.rowChange(c.msg)
			if err != nil {
				t.Fatal(err)
			}
			if rel == nil || rel.t.Source.Name != "t" {
				t.Fatalf("relation %v, want s.t", rel)
			}
			c.want.Position = d.commitPos
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %#v\nwant %#v", got, c.want)
			}
		})
	}
	t.Run("not captured", func(t *testing.T) {
		rel, _, err := testDecoder(t).rowChange(message('I', 8, byte('N'), full))
		if rel != nil || err != nil {
			t.Errorf("relation 8: %v, %v; want neither", rel, err)
		}
	})
}

// TestDecodeMalformed: a truncated or malformed row message is an error
// naming it, never a panic nor a change.
func TestDecodeMalformed(t *testing.T) {
	full := tupleBytes(txt("42"), txt("t"), txt("abc"), null, toasted, txt(`\x00`))
	valid := [][]byte{
		message('I', 7, byte('N'), full),
		message('U', 7, byte('K'), tupleBytes(txt("41")), byte('N'), full),
		message('U', 7, byte('O'), full, byte('N'), full),
		message('D', 7, byte('K'), tupleBytes(txt("41"))),
		message('D', 7, byte('O'), full),
	}
	huge := binary.BigEndian.AppendUint32(append(binary.BigEndian.AppendUint16(nil, 1), 't'), 0xffffffff)
	cases := map[string][]byte{
		"insert, old tuple":       message('I', 7, byte('K'), full),
		"insert, unknown tag":     message('I', 7, byte('X'), full),
		"update, no new tuple":    message('U', 7, byte('K'), full),
		"update, two old tuples":  message('U', 7, byte('K'), full, byte('K'), full),
		"delete, new tuple":       message('D', 7, byte('N'), full),
		"unknown column kind":     message('I', 7, byte('N'), []byte{0, 1, 'x'}),
		"value past the end":      message('I', 7, byte('N'), huge),
		"value longer than left":  message('I', 7, byte('N'), binary.BigEndian.AppendUint32(append(binary.BigEndian.AppendUint16(nil, 1), 't'), 4), 'a', 'b'),
		"more columns than bytes": message('I', 7, byte('N'), []byte{0xff, 0xff, 'n', 'n'}),
		"bytes after the tuple":   append(message('I', 7, byte('N'), full), 0),
		"header only":             message('I', 7),
		"no relation id":          {'U', 0, 0},
	}
	for i, v := range valid {
		if _, _, err := testDecoder(t).rowChange(v); err != nil {
			t.Fatalf("valid message %q: %v", v, err)
		}
		for n := 1; n < len(v); n++ {
			cases[fmt.Sprintf("message %d (%c) truncated to %d bytes", i, v[0], n)] = v[:n]
		}
	}
	for name, msg := range cases {
		t.Run(name, func(t *testing.T) {
			d := testDecoder(t)
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic: %v", r)
					}
				}()
				err = d.decode(msg, cdc.NewWindow())
			}()
			if err == nil || !strings.Contains(err.Error(), "pgoutput message") {
				t.Errorf("error %v, want one naming the pgoutput message", err)
			}
		})
	}
}

// TestBoxString: a string boxed in place is a string to every reader (type
// switch, comparison, fmt) and outlives a collection with only the
// interfaces holding it.
func TestBoxString(t *testing.T) {
	var boxed []any
	for i := range 100 {
		texts := []string{fmt.Sprint("v", i), ""}
		boxed = append(boxed, boxString(texts, 0), boxString(texts, 1))
	}
	runtime.GC()
	for i := range 100 {
		s, ok := boxed[2*i].(string)
		if !ok || s != fmt.Sprint("v", i) || boxed[2*i] != any(fmt.Sprint("v", i)) || fmt.Sprint(boxed[2*i]) != s {
			t.Fatalf("boxed %d: %#v", i, boxed[2*i])
		}
		if e, ok := boxed[2*i+1].(string); !ok || e != "" {
			t.Fatalf("boxed empty %d: %#v", i, boxed[2*i+1])
		}
	}
}
