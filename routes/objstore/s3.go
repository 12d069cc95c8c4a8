package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/weirhq/weir/routes"
)

// s3Store is a bucket prefix on S3 or any S3-compatible service.
type s3Store struct {
	client   *s3.Client
	bucket   string
	prefix   string
	partSize int
}

// newS3Store connects to s3://bucket/prefix. Credentials come from the
// URL's user:password (access key id and secret) or else the SDK's default
// chain (AWS_ACCESS_KEY_ID…, shared config, instance roles).
func newS3Store(ctx context.Context, u *routes.URL, c settings) (*s3Store, error) {
	raw := u.URL()
	if raw.Host == "" {
		return nil, routes.BadInput("s3 URL %s has no bucket (want s3://bucket/prefix)", u)
	}
	opts := []func(*config.LoadOptions) error{config.WithRegion(c.region)}
	if raw.User != nil && u.Password() != "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(raw.User.Username(), u.Password(), "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("s3 config: %w", err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.UsePathStyle = c.pathStyle
		if c.endpoint != "" {
			o.BaseEndpoint = aws.String(c.endpoint)
		}
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return &s3Store{client: client, bucket: raw.Host, prefix: strings.Trim(raw.Path, "/"), partSize: c.partBytes}, nil
}

func (s *s3Store) key(k string) string { return joinKey(s.prefix, k) }

func (s *s3Store) Describe(k string) string { return "s3://" + s.bucket + "/" + s.key(k) }

func (s *s3Store) Close() error { return nil }

func (s *s3Store) Create(ctx context.Context, k string) (objectWriter, error) {
	return newS3Upload(ctx, s, s.key(k)), nil
}

func (s *s3Store) Put(ctx context.Context, k string, data []byte, c cond) (string, error) {
	in := &s3.PutObjectInput{Bucket: &s.bucket, Key: aws.String(s.key(k)), Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))}
	switch {
	case c.absent:
		in.IfNoneMatch = aws.String("*")
	case c.version != "":
		in.IfMatch = aws.String(c.version)
	}
	out, err := s.client.PutObject(ctx, in)
	if err != nil {
		return "", s3Err(err)
	}
	return aws.ToString(out.ETag), nil
}

func (s *s3Store) Get(ctx context.Context, k string) ([]byte, string, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: aws.String(s.key(k))})
	if err != nil {
		return nil, "", s3Err(err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	return b, aws.ToString(out.ETag), err
}

func (s *s3Store) Open(ctx context.Context, k string) (blob, error) {
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: aws.String(s.key(k))})
	if err != nil {
		return nil, s3Err(err)
	}
	return &s3Blob{ctx: ctx, s: s, key: s.key(k), size: aws.ToInt64(out.ContentLength), etag: aws.ToString(out.ETag)}, nil
}

func (s *s3Store) Stream(ctx context.Context, k string) (io.ReadCloser, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: aws.String(s.key(k))})
	if err != nil {
		return nil, s3Err(err)
	}
	return out.Body, nil
}

func (s *s3Store) List(ctx context.Context, prefix string) ([]object, error) {
	full := s.key(prefix)
	if full != "" {
		full += "/"
	}
	var out []object
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: aws.String(full)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, s3Err(err)
		}
		for _, o := range page.Contents {
			out = append(out, object{Key: strings.TrimPrefix(strings.TrimPrefix(aws.ToString(o.Key), s.prefix), "/"), Size: aws.ToInt64(o.Size)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// Move copies src to dst inside the bucket (CopyObject: objects up to 5 GiB,
// which parseSettings guarantees through file_bytes) and deletes src.
func (s *s3Store) Move(ctx context.Context, src, dst string) error {
	_, err := s.client.CopyObject(ctx, &s3.CopyObjectInput{Bucket: &s.bucket, Key: aws.String(s.key(dst)),
		CopySource: aws.String(url.PathEscape(s.bucket) + "/" + escapeKey(s.key(src)))})
	if err != nil {
		return s3Err(err)
	}
	return s.Delete(ctx, src)
}

// escapeKey URL-escapes each part of a key for x-amz-copy-source.
func escapeKey(k string) string {
	parts := strings.Split(k, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

func (s *s3Store) Delete(ctx context.Context, k string) error {
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: aws.String(s.key(k))})
	if err = s3Err(err); errors.Is(err, errNotExist) {
		return nil
	}
	return err
}

// s3Blob reads ranges of one object version (If-Match on its ETag, so an
// object replaced mid-read fails instead of mixing versions).
type s3Blob struct {
	ctx  context.Context // the Read call's: io.ReaderAt has no ctx parameter
	s    *s3Store
	key  string
	size int64
	etag string
}

func (b *s3Blob) Size() int64  { return b.size }
func (b *s3Blob) Close() error { return nil }

func (b *s3Blob) ReadAt(p []byte, off int64) (int, error) {
	if off >= b.size {
		return 0, io.EOF
	}
	end := min(off+int64(len(p)), b.size) - 1
	out, err := b.s.client.GetObject(b.ctx, &s3.GetObjectInput{Bucket: &b.s.bucket, Key: &b.key,
		Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, end)), IfMatch: nilIfEmpty(b.etag)})
	if err != nil {
		return 0, s3Err(err)
	}
	defer out.Body.Close()
	n, err := io.ReadFull(out.Body, p[:end-off+1])
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// s3Err maps HTTP statuses to the store's sentinels, keeping the SDK error.
func s3Err(err error) error {
	if err == nil {
		return nil
	}
	var st interface{ HTTPStatusCode() int }
	if errors.As(err, &st) {
		switch st.HTTPStatusCode() {
		case http.StatusNotFound:
			return fmt.Errorf("%w: %w", errNotExist, err)
		case http.StatusPreconditionFailed, http.StatusConflict:
			return fmt.Errorf("%w: %w", errPrecondition, err)
		}
	}
	return err
}
