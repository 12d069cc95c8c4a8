package objstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/weirhq/weir/routes"
)

// fileStore keeps objects as files under root. Conditional writes hold an
// flock on the object's directory, so they are atomic between processes on
// one machine (not across NFS clients); versions are content hashes.
type fileStore struct {
	root string
	mu   sync.Mutex // serializes conditional writes inside this process
}

func newFileStore(root string) *fileStore { return &fileStore{root: filepath.Clean(root)} }

func (s *fileStore) path(key string) string { return filepath.Join(s.root, filepath.FromSlash(key)) }

func (s *fileStore) Describe(key string) string { return "file://" + filepath.ToSlash(s.path(key)) }

func (s *fileStore) Close() error { return nil }

// fileWriter writes straight to the final path: data files live under a
// run prefix no reader follows until the manifest names them.
type fileWriter struct {
	f    *os.File
	path string
}

func (s *fileStore) Create(_ context.Context, key string) (objectWriter, error) {
	p := s.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(p)
	if err != nil {
		return nil, err
	}
	return &fileWriter{f: f, path: p}, nil
}

func (w *fileWriter) Write(p []byte) (int, error) { return w.f.Write(p) }

func (w *fileWriter) Close() error {
	if err := w.f.Sync(); err != nil {
		w.f.Close()
		return fmt.Errorf("sync %s: %w", w.path, err)
	}
	return w.f.Close()
}

func (w *fileWriter) Abort() {
	w.f.Close()
	os.Remove(w.path)
}

// Put writes through a temporary file renamed into place (atomic), under
// the directory's flock when cond needs checking.
func (s *fileStore) Put(_ context.Context, key string, data []byte, c cond) (string, error) {
	p := s.path(key)
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	unlock, err := s.lockDir(dir)
	if err != nil {
		return "", err
	}
	defer unlock()
	if err := s.check(p, c); err != nil {
		return "", err
	}
	if err := writeAtomic(p, data); err != nil {
		return "", err
	}
	return contentVersion(data), nil
}

func (s *fileStore) check(p string, c cond) error {
	if c == (cond{}) {
		return nil
	}
	cur, err := os.ReadFile(p)
	switch {
	case missing(err):
		if c.absent {
			return nil
		}
		return errPrecondition
	case err != nil:
		return err
	case c.absent || contentVersion(cur) != c.version:
		return errPrecondition
	}
	return nil
}

// lockDir takes an exclusive flock on dir (released by the returned func).
func (s *fileStore) lockDir(dir string) (func(), error) {
	s.mu.Lock()
	f, err := os.Open(dir)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		s.mu.Unlock()
		return nil, fmt.Errorf("flock %s: %w", dir, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
		s.mu.Unlock()
	}, nil
}

func writeAtomic(p string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(p), ".weir-tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return err
	}
	return syncDir(filepath.Dir(p))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func contentVersion(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16])
}

// missing reports a path that does not exist, also below a file.
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// empty reports whether root holds nothing yet: missing, or an empty
// directory. A root that is one file is that file's table.
func (s *fileStore) empty() (bool, error) {
	st, err := os.Stat(s.root)
	switch {
	case missing(err):
		return true, nil
	case err != nil:
		return false, err
	case !st.IsDir():
		return false, nil
	}
	entries, err := os.ReadDir(s.root)
	return len(entries) == 0, err
}

func (s *fileStore) Get(_ context.Context, key string) ([]byte, string, error) {
	b, err := os.ReadFile(s.path(key))
	if missing(err) {
		return nil, "", errNotExist
	}
	if err != nil {
		return nil, "", err
	}
	return b, contentVersion(b), nil
}

type fileBlob struct {
	*os.File
	size int64
}

func (b fileBlob) Size() int64 { return b.size }

func (s *fileStore) Open(_ context.Context, key string) (blob, error) {
	f, err := os.Open(s.path(key))
	if missing(err) {
		return nil, errNotExist
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		f.Close()
		return nil, cmpErr(err, errNotExist)
	}
	return fileBlob{File: f, size: st.Size()}, nil
}

func (s *fileStore) Stream(ctx context.Context, key string) (io.ReadCloser, error) {
	b, err := s.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	return b.(fileBlob).File, nil
}

// cmpErr returns err, or alt when err is nil.
func cmpErr(err, alt error) error {
	if err != nil {
		return err
	}
	return alt
}

func (s *fileStore) List(_ context.Context, prefix string) ([]object, error) {
	var out []object
	base := s.path(prefix)
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if missing(err) {
			return nil
		}
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".weir-tmp-") {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(s.root, p)
		out = append(out, object{Key: filepath.ToSlash(rel), Size: info.Size()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, err
}

// Move renames src to dst and syncs dst's directory, so the rename
// survives a crash; src's emptied directories are removed.
func (s *fileStore) Move(ctx context.Context, src, dst string) error {
	p := s.path(dst)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if err := os.Rename(s.path(src), p); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(p)); err != nil {
		return err
	}
	return s.Delete(ctx, src) // the file is gone: this prunes empty folders
}

// Delete removes the file and then its directories while they are empty.
func (s *fileStore) Delete(_ context.Context, key string) error {
	p := s.path(key)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for dir := filepath.Dir(p); len(dir) > len(s.root) && strings.HasPrefix(dir, s.root); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break
		}
	}
	return nil
}

// fileRoot turns a file:// URL into a directory.
func fileRoot(u *routes.URL) (string, error) {
	raw := u.URL()
	p := raw.Path
	if raw.Host != "" && raw.Host != "localhost" {
		return "", routes.BadInput("file URL %s names host %q; use file:///absolute/path or a bare path", u, raw.Host)
	}
	if p == "" {
		p = raw.Opaque
	}
	if p == "" {
		return "", routes.BadInput("file URL %s has no path", u)
	}
	return filepath.Abs(filepath.FromSlash(p))
}
