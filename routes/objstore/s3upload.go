package objstore

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// minPartBytes is S3's smallest part (except the last).
const minPartBytes = 5 << 20

// s3Upload streams an object in multipart parts of partSize bytes, one part
// uploading while the next fills: at most two parts in memory. An object
// smaller than one part is a single PutObject.
type s3Upload struct {
	ctx      context.Context // the Write call's context
	s        *s3Store
	key      string
	size     int
	buf      []byte
	spare    []byte
	uploadID string
	parts    []types.CompletedPart
	done     chan error // the part in flight, nil when none
	err      error      // sticky
}

func newS3Upload(ctx context.Context, s *s3Store, key string) *s3Upload {
	size := max(s.partSize, minPartBytes)
	return &s3Upload{ctx: ctx, s: s, key: key, size: size, buf: make([]byte, 0, size)}
}

func (u *s3Upload) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 && u.err == nil {
		k := min(len(p), u.size-len(u.buf))
		u.buf = append(u.buf, p[:k]...)
		p, n = p[k:], n+k
		if len(u.buf) == u.size {
			u.err = u.flushPart()
		}
	}
	return n, u.err
}

// wait collects the part in flight.
func (u *s3Upload) wait() error {
	if u.done == nil {
		return nil
	}
	err := <-u.done
	u.done = nil
	return err
}

func (u *s3Upload) flushPart() error {
	if err := u.wait(); err != nil {
		return err
	}
	if u.uploadID == "" {
		out, err := u.s.client.CreateMultipartUpload(u.ctx, &s3.CreateMultipartUploadInput{Bucket: &u.s.bucket, Key: &u.key})
		if err != nil {
			return fmt.Errorf("start upload of %s: %w", u.key, s3Err(err))
		}
		u.uploadID = aws.ToString(out.UploadId)
	}
	body, n := u.buf, int32(len(u.parts)+1)
	u.buf, u.spare = u.spare[:0], nil
	if u.buf == nil {
		u.buf = make([]byte, 0, u.size)
	}
	u.done = make(chan error, 1)
	go func() {
		out, err := u.s.client.UploadPart(u.ctx, &s3.UploadPartInput{Bucket: &u.s.bucket, Key: &u.key, UploadId: &u.uploadID,
			PartNumber: aws.Int32(n), Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body)))})
		if err == nil {
			u.parts = append(u.parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(n)})
		}
		u.spare = body
		u.done <- s3Err(err)
	}()
	return nil
}

// Close uploads what is left and publishes the object.
func (u *s3Upload) Close() error {
	if u.err != nil {
		return u.err
	}
	if u.uploadID == "" {
		_, err := u.s.client.PutObject(u.ctx, &s3.PutObjectInput{Bucket: &u.s.bucket, Key: &u.key,
			Body: bytes.NewReader(u.buf), ContentLength: aws.Int64(int64(len(u.buf)))})
		u.err = s3Err(err)
		return u.err
	}
	if len(u.buf) > 0 {
		if u.err = u.flushPart(); u.err != nil {
			return u.err
		}
	}
	if u.err = u.wait(); u.err != nil {
		return u.err
	}
	sort.Slice(u.parts, func(i, j int) bool { return *u.parts[i].PartNumber < *u.parts[j].PartNumber })
	_, err := u.s.client.CompleteMultipartUpload(u.ctx, &s3.CompleteMultipartUploadInput{Bucket: &u.s.bucket, Key: &u.key,
		UploadId: &u.uploadID, MultipartUpload: &types.CompletedMultipartUpload{Parts: u.parts}})
	u.err = s3Err(err)
	u.uploadID = ""
	return u.err
}

// Abort cancels an unfinished multipart upload (S3 keeps and bills its
// parts otherwise), on a context that survives the caller's cancel.
func (u *s3Upload) Abort() {
	u.wait()
	if u.uploadID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(u.ctx), 30*time.Second)
	defer cancel()
	u.s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &u.s.bucket, Key: &u.key, UploadId: &u.uploadID})
	u.uploadID = ""
}
