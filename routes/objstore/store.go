package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// store is one bucket prefix (or local directory) of objects. Keys are
// slash-separated and relative to the URL's prefix. Every method is safe for
// concurrent use.
type store interface {
	// Create starts a streamed write of key; the object appears only when
	// the writer's Close succeeds, and Abort discards it.
	Create(ctx context.Context, key string) (objectWriter, error)
	// Put writes a small object if cond holds, and returns its new version.
	// A failed condition is errPrecondition.
	Put(ctx context.Context, key string, data []byte, cond cond) (version string, err error)
	// Get reads a small object and its version; a missing one is errNotExist.
	Get(ctx context.Context, key string) (data []byte, version string, err error)
	// Open returns a random-access reader of key. ctx bounds every read
	// made through it.
	Open(ctx context.Context, key string) (blob, error)
	// Stream returns a sequential reader of key.
	Stream(ctx context.Context, key string) (io.ReadCloser, error)
	// List returns every object under prefix (recursively), sorted by key.
	List(ctx context.Context, prefix string) ([]object, error)
	// Move renames src to dst, replacing dst: atomic on a file system; on
	// S3 and GCS a server-side copy, then a delete of src.
	Move(ctx context.Context, src, dst string) error
	// Delete removes key; a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// Describe names the object for messages (a URL without secrets).
	Describe(key string) string
	Close() error
}

// objectWriter is a streamed upload.
type objectWriter interface {
	io.Writer
	// Close finishes the upload and publishes the object.
	Close() error
	// Abort discards everything written; safe after a failed Close.
	Abort()
}

// blob is an open object for random access (Parquet footers and pages).
type blob interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// object is one listed object.
type object struct {
	Key  string
	Size int64
}

// cond is a write precondition: the object must not exist (absent), or must
// be at version (a non-empty version), or nothing (the zero cond).
type cond struct {
	absent  bool
	version string
}

var (
	errPrecondition = errors.New("object changed concurrently (precondition failed)")
	errNotExist     = errors.New("object does not exist")
)

// joinKey joins key parts with slashes, dropping empty parts.
func joinKey(parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p = strings.Trim(p, "/"); p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, "/")
}

// cleanKey rejects keys that would climb out of the prefix.
func cleanKey(key string) (string, error) {
	c := path.Clean("/" + key)[1:]
	for _, part := range strings.Split(key, "/") {
		if part == ".." {
			return "", fmt.Errorf("object path %q climbs out of the URL's prefix", key)
		}
	}
	return c, nil
}

// deleteAll removes keys one by one, returning the first error.
func deleteAll(ctx context.Context, s store, keys []string) error {
	var first error
	for _, k := range keys {
		if err := s.Delete(ctx, k); err != nil && first == nil {
			first = err
		}
	}
	return first
}
