package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/weirhq/weir/routes"
)

// gcsStore is a bucket prefix on Google Cloud Storage. Versions are object
// generations; conditional writes use DoesNotExist / GenerationMatch.
type gcsStore struct {
	client *storage.Client
	bucket *storage.BucketHandle
	name   string
	prefix string
	chunk  int
}

// newGCSStore connects to gcs://bucket/prefix with Application Default
// Credentials, or to ?endpoint= (an emulator) without authentication.
// STORAGE_EMULATOR_HOST is honoured as the client library does.
func newGCSStore(ctx context.Context, u *routes.URL, c settings) (*gcsStore, error) {
	raw := u.URL()
	if raw.Host == "" {
		return nil, routes.BadInput("gcs URL %s has no bucket (want gcs://bucket/prefix)", u)
	}
	var opts []option.ClientOption
	if c.endpoint != "" {
		opts = append(opts, option.WithEndpoint(strings.TrimSuffix(c.endpoint, "/")+"/storage/v1/"), option.WithoutAuthentication(), storage.WithJSONReads())
	}
	client, err := storage.NewClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("gcs client: %w", err)
	}
	return &gcsStore{client: client, bucket: client.Bucket(raw.Host), name: raw.Host, prefix: strings.Trim(raw.Path, "/"), chunk: c.partBytes}, nil
}

func (s *gcsStore) key(k string) string { return joinKey(s.prefix, k) }

func (s *gcsStore) Describe(k string) string { return "gcs://" + s.name + "/" + s.key(k) }

func (s *gcsStore) Close() error { return s.client.Close() }

// gcsWriter streams through storage.Writer (resumable, chunk-sized
// buffers); cancelling its context aborts the upload.
type gcsWriter struct {
	w      *storage.Writer
	cancel context.CancelFunc
}

func (s *gcsStore) Create(ctx context.Context, k string) (objectWriter, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := s.bucket.Object(s.key(k)).NewWriter(ctx)
	w.ChunkSize = s.chunk
	return &gcsWriter{w: w, cancel: cancel}, nil
}

func (w *gcsWriter) Write(p []byte) (int, error) { return w.w.Write(p) }

func (w *gcsWriter) Close() error {
	defer w.cancel()
	return gcsErr(w.w.Close())
}

func (w *gcsWriter) Abort() {
	w.cancel()
	w.w.Close()
}

func (s *gcsStore) Put(ctx context.Context, k string, data []byte, c cond) (string, error) {
	obj := s.bucket.Object(s.key(k))
	switch {
	case c.absent:
		obj = obj.If(storage.Conditions{DoesNotExist: true})
	case c.version != "":
		gen, err := strconv.ParseInt(c.version, 10, 64)
		if err != nil {
			return "", fmt.Errorf("bad generation %q: %w", c.version, err)
		}
		obj = obj.If(storage.Conditions{GenerationMatch: gen})
	}
	w := obj.NewWriter(ctx)
	w.ChunkSize = 0 // one request
	if _, err := w.Write(data); err != nil {
		w.Close()
		return "", gcsErr(err)
	}
	if err := w.Close(); err != nil {
		return "", gcsErr(err)
	}
	return strconv.FormatInt(w.Attrs().Generation, 10), nil
}

func (s *gcsStore) Get(ctx context.Context, k string) ([]byte, string, error) {
	r, err := s.bucket.Object(s.key(k)).NewReader(ctx)
	if err != nil {
		return nil, "", gcsErr(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	return b, strconv.FormatInt(r.Attrs.Generation, 10), gcsErr(err)
}

func (s *gcsStore) Open(ctx context.Context, k string) (blob, error) {
	attrs, err := s.bucket.Object(s.key(k)).Attrs(ctx)
	if err != nil {
		return nil, gcsErr(err)
	}
	obj := s.bucket.Object(s.key(k)).Generation(attrs.Generation)
	return &gcsBlob{ctx: ctx, obj: obj, size: attrs.Size}, nil
}

func (s *gcsStore) Stream(ctx context.Context, k string) (io.ReadCloser, error) {
	r, err := s.bucket.Object(s.key(k)).NewReader(ctx)
	return r, gcsErr(err)
}

func (s *gcsStore) List(ctx context.Context, prefix string) ([]object, error) {
	full := s.key(prefix)
	if full != "" {
		full += "/"
	}
	var out []object
	it := s.bucket.Objects(ctx, &storage.Query{Prefix: full})
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return nil, gcsErr(err)
		}
		out = append(out, object{Key: strings.TrimPrefix(strings.TrimPrefix(a.Name, s.prefix), "/"), Size: a.Size})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// Move copies src to dst inside the bucket (a rewrite, which the client
// repeats until done for large objects) and deletes src.
func (s *gcsStore) Move(ctx context.Context, src, dst string) error {
	from := s.bucket.Object(s.key(src))
	if _, err := s.bucket.Object(s.key(dst)).CopierFrom(from).Run(ctx); err != nil {
		return gcsErr(err)
	}
	return s.Delete(ctx, src)
}

func (s *gcsStore) Delete(ctx context.Context, k string) error {
	err := gcsErr(s.bucket.Object(s.key(k)).Delete(ctx))
	if errors.Is(err, errNotExist) {
		return nil
	}
	return err
}

// gcsBlob reads ranges of one object generation.
type gcsBlob struct {
	ctx  context.Context // the Read call's: io.ReaderAt has no ctx parameter
	obj  *storage.ObjectHandle
	size int64
}

func (b *gcsBlob) Size() int64  { return b.size }
func (b *gcsBlob) Close() error { return nil }

func (b *gcsBlob) ReadAt(p []byte, off int64) (int, error) {
	if off >= b.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), b.size-off)
	r, err := b.obj.NewRangeReader(b.ctx, off, n)
	if err != nil {
		return 0, gcsErr(err)
	}
	defer r.Close()
	got, err := io.ReadFull(r, p[:n])
	if err == nil && got < len(p) {
		err = io.EOF
	}
	return got, err
}

func gcsErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, storage.ErrObjectNotExist) {
		return fmt.Errorf("%w: %w", errNotExist, err)
	}
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		switch ge.Code {
		case http.StatusNotFound:
			return fmt.Errorf("%w: %w", errNotExist, err)
		case http.StatusPreconditionFailed, http.StatusConflict:
			return fmt.Errorf("%w: %w", errPrecondition, err)
		}
	}
	return err
}
