package fileformat

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// Compression is the codec (and zstd's level) of the Parquet files a
// destination writes: the compression= and compression_level= parameters
// of file://, s3://, gcs:// and iceberg URLs.
type Compression struct {
	Codec string // one of Codecs
	Level int    // zstd's level, 1..22; 0 for the codec's default
}

// The codecs compression= takes. lz4 is Parquet's LZ4_RAW (the framed
// LZ4 codec is deprecated by the format).
const (
	CodecZstd   = "zstd"
	CodecSnappy = "snappy"
	CodecLZ4    = "lz4"
	CodecNone   = "none"
)

// Codecs lists the values compression= takes.
var Codecs = []string{CodecZstd, CodecSnappy, CodecLZ4, CodecNone}

// DefaultCompression is the codec when compression= is not given: zstd at
// level 1, for the smallest files. Measured on TPC-H lineitem transfers
// from PostgreSQL (bench/README.md, "String dictionaries built by the
// encoder", alternating runs), snappy takes about 14 % less CPU (6.38 vs
// 7.38 CPU-s at SF 0.5) and writes files 1.5× larger (119 vs 80 MB); the
// earlier single runs at load 49–61 that showed snappy costing more were
// noise.
var DefaultCompression = Compression{Codec: CodecZstd}

// zstd levels compression_level= takes (zstd's own range; the encoder maps
// them onto its four speeds: 1, 2–4, 5–8, 9–22).
const minZstdLevel, maxZstdLevel = 1, 22

// ParseCompression reads the compression= and compression_level= values
// (empty when not given). The error names the parameter and what it takes.
func ParseCompression(codec, level string) (Compression, error) {
	c := DefaultCompression
	if codec != "" {
		c = Compression{Codec: strings.ToLower(codec)}
	}
	switch c.Codec {
	case CodecZstd, CodecSnappy, CodecLZ4, CodecNone:
	default:
		return Compression{}, fmt.Errorf("compression=%q: use one of %s", codec, strings.Join(Codecs, ", "))
	}
	if level == "" {
		return c, nil
	}
	if c.Codec != CodecZstd {
		return Compression{}, fmt.Errorf("compression_level=%q: only zstd has levels (compression=%s)", level, c.Codec)
	}
	n, err := strconv.Atoi(level)
	if err != nil || n < minZstdLevel || n > maxZstdLevel {
		return Compression{}, fmt.Errorf("compression_level=%q: want a zstd level from %d to %d", level, minZstdLevel, maxZstdLevel)
	}
	c.Level = n
	return c, nil
}

// codec is arrow-go's codec for c (zero Compression: the default).
func (c Compression) codec() compress.Compression {
	switch c.Codec {
	case CodecSnappy:
		return compress.Codecs.Snappy
	case CodecLZ4:
		return compress.Codecs.Lz4Raw
	case CodecNone:
		return compress.Codecs.Uncompressed
	case CodecZstd:
		return compress.Codecs.Zstd
	}
	return DefaultCompression.codec()
}

// level is the level to hand arrow-go: the codec's default unless set.
func (c Compression) level() int {
	if c.Level == 0 {
		return compress.DefaultCompressionLevel
	}
	return c.Level
}
