//go:build !cgo

package duck

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Options tune one database.
type Options struct {
	MemoryLimit string
	Threads     int
	TempDir     string
}

// DB stands in for the engine in builds without it; Open always fails.
type DB struct{}

// Open fails with ErrNoEngine.
func Open(context.Context, Options) (*DB, error) { return nil, ErrNoEngine }

func (*DB) Reset(context.Context) error                               { return ErrNoEngine }
func (*DB) Close() error                                              { return nil }
func (*DB) RegisterView(string, array.RecordReader) error             { return ErrNoEngine }
func (*DB) DropView(context.Context, string) error                    { return ErrNoEngine }
func (*DB) Exec(context.Context, string) error                        { return ErrNoEngine }
func (*DB) QueryRow(context.Context, string, ...any) error            { return ErrNoEngine }
func (*DB) Query(context.Context, string) (array.RecordReader, error) { return nil, ErrNoEngine }
func (*DB) Schema(context.Context, string) (*arrow.Schema, error)     { return nil, ErrNoEngine }
func (*DB) Scans(context.Context, string) (int, error)                { return 0, ErrNoEngine }
func (*DB) MaterializeView(context.Context, string) (int64, error)    { return 0, ErrNoEngine }
func (*DB) Count(context.Context, string) (int64, error)              { return 0, ErrNoEngine }
func (*DB) Load(context.Context, string, array.RecordReader) (int64, error) {
	return 0, ErrNoEngine
}

func (*DB) Plan(context.Context, string) (string, error) { return "", ErrNoEngine }

// Describe fails with ErrNoEngine.
func (*DB) Describe(context.Context, string) ([]Column, error) { return nil, ErrNoEngine }

// TablesRead fails with ErrNoEngine.
func (*DB) TablesRead(context.Context, string) ([]string, error) { return nil, ErrNoEngine }
