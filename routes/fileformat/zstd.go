package fileformat

import (
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// zstdWindow is the encoders' window: one Parquet page (1 MiB by default)
// never refers back further, so a larger window saves nothing.
const zstdWindow = 1 << 20

// leanZstd is arrow-go's zstd codec with encoders sized for Parquet pages.
// arrow-go's own encoders keep a 16 MiB history each (an 8 MiB window,
// doubled), one per concurrently compressing column writer: the largest
// item of a pipe's memory. These keep about 1 MiB and write the same
// standard zstd frames (ratio unchanged for pages up to the window).
// Decoding and the streaming writers stay arrow-go's.
//
// The codec table is global: UseLeanZstd installs it for every Parquet
// writer in the process, which is the intent (weir's memory bound is per
// process), but only when a writer asks for it — importing this package
// changes nothing.
type leanZstd struct {
	compress.Codec
	mu    sync.Mutex
	pools map[zstd.EncoderLevel]*sync.Pool
}

// UseLeanZstd installs the lean zstd codec in arrow-go's codec table, once.
// Every Parquet writer of weir calls it before it writes: NewEncoder here,
// routes/iceberg's endpoint.
var UseLeanZstd = sync.OnceFunc(func() {
	base, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		return
	}
	compress.RegisterCodec(compress.Codecs.Zstd, &leanZstd{Codec: base, pools: map[zstd.EncoderLevel]*sync.Pool{}})
})

func (c *leanZstd) Encode(dst, src []byte) []byte {
	return c.EncodeLevel(dst, src, compress.DefaultCompressionLevel)
}

// defaultLevel is zstd level 1, Arrow C++'s (and so pyarrow's) default for
// Parquet: on weir's rows it compresses about twice as fast as level 3
// with files a few percent larger, and its match tables are smaller.
const defaultLevel = zstd.SpeedFastest

func (c *leanZstd) EncodeLevel(dst, src []byte, level int) []byte {
	lvl := defaultLevel
	if level != compress.DefaultCompressionLevel {
		lvl = zstd.EncoderLevelFromZstd(level)
	}
	pool := c.pool(lvl)
	enc := pool.Get().(*zstd.Encoder)
	defer pool.Put(enc)
	return enc.EncodeAll(src, dst[:0])
}

func (c *leanZstd) pool(lvl zstd.EncoderLevel) *sync.Pool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pools[lvl]
	if !ok {
		p = &sync.Pool{New: func() any {
			enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(lvl), zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(zstdWindow),
				zstd.WithLowerEncoderMem(true), zstd.WithZeroFrames(true), zstd.WithAllLitEntropyCompression(true))
			return enc
		}}
		c.pools[lvl] = p
	}
	return p
}
