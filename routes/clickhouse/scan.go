package clickhouse

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"sync/atomic"
)

// scanNative reads a Native-format stream to its end and counts its rows.
// It parses block and column headers and skips column data without
// decoding it, so a relay knows its row count.
func scanNative(r io.Reader, rows *atomic.Int64) error {
	br := bufio.NewReaderSize(r, 128<<10)
	for {
		if _, err := br.Peek(1); err == io.EOF {
			return nil
		}
		cols, err := binary.ReadUvarint(br)
		if err != nil {
			return fmt.Errorf("native block: %w", err)
		}
		n, err := binary.ReadUvarint(br)
		if err != nil {
			return fmt.Errorf("native block: %w", err)
		}
		for c := uint64(0); c < cols; c++ {
			if err := skipColumnWithHeader(br, int(n)); err != nil {
				return err
			}
		}
		rows.Add(int64(n))
	}
}

func skipColumnWithHeader(br *bufio.Reader, rows int) error {
	name, err := readString(br)
	if err != nil {
		return fmt.Errorf("native column name: %w", err)
	}
	typ, err := readString(br)
	if err != nil {
		return fmt.Errorf("native column %s type: %w", name, err)
	}
	t, err := parseType(typ)
	if err == nil {
		err = skipColumn(br, t, rows)
	}
	if err != nil {
		return fmt.Errorf("native column %s %s: %w", name, typ, err)
	}
	return nil
}

func readString(br *bufio.Reader) (string, error) {
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return "", err
	}
	b := make([]byte, n)
	_, err = io.ReadFull(br, b)
	return string(b), err
}

// skipColumn discards rows values of type t.
func skipColumn(br *bufio.Reader, t chType, rows int) error {
	if rows == 0 {
		return nil
	}
	switch t.Name {
	case "Nullable":
		if err := discard(br, rows); err != nil {
			return err
		}
		return skipColumn(br, *t.Elem, rows)
	case "Array":
		var last uint64
		for i := 0; i < rows; i++ {
			var b [8]byte
			if _, err := io.ReadFull(br, b[:]); err != nil {
				return err
			}
			last = binary.LittleEndian.Uint64(b[:])
		}
		return skipColumn(br, *t.Elem, int(last))
	case "String":
		for i := 0; i < rows; i++ {
			n, err := binary.ReadUvarint(br)
			if err != nil {
				return err
			}
			if err := discard(br, int(n)); err != nil {
				return err
			}
		}
		return nil
	}
	w := fixedWidth(t)
	if w == 0 {
		return fmt.Errorf("cannot skip type %s", t.raw)
	}
	return discard(br, w*rows)
}

func discard(br *bufio.Reader, n int) error {
	_, err := br.Discard(n)
	return err
}

// fixedWidth is the byte width of a fixed-width type's values, 0 else.
func fixedWidth(t chType) int {
	switch t.Name {
	case "Int8", "UInt8", "Bool", "Enum8":
		return 1
	case "Int16", "UInt16", "Date", "Enum16":
		return 2
	case "Int32", "UInt32", "Float32", "Date32", "DateTime", "IPv4":
		return 4
	case "Int64", "UInt64", "Float64", "DateTime64":
		return 8
	case "Int128", "UInt128", "UUID", "IPv6":
		return 16
	case "Int256", "UInt256":
		return 32
	case "Decimal", "Decimal32", "Decimal64", "Decimal128", "Decimal256":
		p, _ := decimalParams(t)
		return decimalWidth(p)
	case "FixedString":
		n, _ := t.intArg(0)
		return n
	}
	return 0
}
