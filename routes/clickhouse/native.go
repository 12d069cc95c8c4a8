package clickhouse

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/ClickHouse/ch-go"
	"github.com/ClickHouse/ch-go/chpool"
	"github.com/ClickHouse/ch-go/proto"

	"github.com/weirhq/weir/routes"
)

// Protocol negotiation: ch-go writes the client-info block of a query in
// the layout of revision 54420+, while servers from 54032 to 54419 (e.g.
// 18.16, revision 54412) read an older layout and fail with UNKNOWN_SETTING.
// Such servers get protocol 54031, the last one before that block changed.
const (
	modernRevision = 54420
	legacyProtocol = 54031
)

// pollInterval bounds how long ch-go waits for a server packet before it
// looks at the context again (it keeps waiting after a timeout), so a
// cancelled or failed query stops this fast.
const pollInterval = 200 * time.Millisecond

// maxConns leaves room for the widest budget plus lock and metadata queries.
const maxConns = 40

// nativeConn is a pool of native-protocol connections.
type nativeConn struct {
	pool     *chpool.Pool
	hello    proto.ServerHello
	protocol int // negotiated protocol revision
}

var _ conn = (*nativeConn)(nil)

func nativeOptions(u *url.URL, db string, o Options) ch.Options {
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "9000")
	}
	pw, _ := u.User.Password()
	opt := ch.Options{Address: host, Database: db, User: u.User.Username(), Password: pw,
		Compression: nativeCompression(o.Compression, u.Hostname()), ClientName: "weir",
		DialTimeout: dialTimeout, ReadTimeout: pollInterval}
	if o.Secure {
		opt.TLS = &tls.Config{ServerName: u.Hostname()}
	} else {
		opt.Dialer = patientDialer{}
	}
	return opt
}

const dialTimeout = 10 * time.Second

// patientDialer gives the server's hello the dial timeout to arrive. ch-go
// reads every packet with ReadTimeout (pollInterval, so queries notice a
// cancel fast, retrying reads that time out), but a handshake read that
// times out fails the connection: a loaded server that answers in 300 ms
// would be unreachable. (TLS connections keep ch-go's own *net.Dialer.)
type patientDialer struct{}

func (patientDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := (&net.Dialer{Timeout: dialTimeout}).DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return &helloConn{Conn: c}, nil
}

// helloConn stretches read deadlines until the first bytes from the server.
type helloConn struct {
	net.Conn
	heard bool
}

func (c *helloConn) SetReadDeadline(t time.Time) error {
	if patient := time.Now().Add(dialTimeout); !c.heard && !t.IsZero() && t.Before(patient) {
		t = patient
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *helloConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.heard = true
	}
	return n, err
}

// nativeCompression picks the block compression. On a loopback host LZ4
// only costs CPU on both ends (and on the client a compressed copy of every
// block), so auto turns it off there, as clickhouse-client does for local
// addresses; across a network LZ4 saves more time than it costs.
func nativeCompression(setting, host string) ch.Compression {
	switch {
	case setting == "none", setting == "auto" && isLoopback(host):
		return ch.CompressionDisabled
	}
	return ch.CompressionLZ4
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// dialNative negotiates the protocol with one connection, then opens the pool.
func dialNative(ctx context.Context, opt ch.Options) (*nativeConn, error) {
	c, err := ch.Dial(ctx, opt)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	hello := c.ServerInfo()
	c.Close()
	opt.ProtocolVersion = negotiate(hello.Revision)
	pool, err := chpool.Dial(ctx, chpool.Options{ClientOptions: opt, MaxConns: maxConns})
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return &nativeConn{pool: pool, hello: hello, protocol: opt.ProtocolVersion}, nil
}

// negotiate picks the protocol revision for a server's revision (0 means
// ch-go's newest).
func negotiate(serverRevision int) int {
	if serverRevision < modernRevision {
		return legacyProtocol
	}
	return 0
}

func (n *nativeConn) exec(ctx context.Context, sql string) error {
	if err := n.pool.Do(ctx, ch.Query{Body: sql}); err != nil {
		return fmt.Errorf("%s: %w", stmtName(sql), err)
	}
	return nil
}

func (n *nativeConn) query(ctx context.Context, sql string, s sink) error {
	return n.pool.Do(ctx, ch.Query{Body: sql, Result: s, OnResult: func(ctx context.Context, _ proto.Block) error {
		return s.blockDone(ctx)
	}})
}

func (n *nativeConn) close() error {
	n.pool.Close()
	return nil
}

// insert sends one Native block per record batch. Each batch is encoded in
// OnInput, where an encoding error still stops the INSERT before any byte
// of that block leaves.
func (n *nativeConn) insert(ctx context.Context, table string, cols []string, encs []encoder, next batchSource) (int64, error) {
	in := make(proto.Input, len(cols))
	ics := make([]*inputCol, len(cols))
	for i := range cols {
		ics[i] = &inputCol{typ: proto.ColumnType(encs[i].chType())}
		in[i] = proto.InputColumn{Name: cols[i], Data: ics[i]}
	}
	var rows int64
	fill := func(ctx context.Context) error {
		n, err := fillBlock(ics, cols, encs, next)
		rows += n
		return err
	}
	sql := fmt.Sprintf("INSERT INTO %s (%s) VALUES", table, joinIdents(cols))
	if err := n.pool.Do(ctx, ch.Query{Body: sql, Input: in, OnInput: fill}); err != nil {
		return rows, fmt.Errorf("insert into %s: %w", table, err)
	}
	return rows, nil
}

// fillBlock encodes the next non-empty batch into the input columns; at
// the end it leaves them empty and returns io.EOF.
func fillBlock(ics []*inputCol, cols []string, encs []encoder, next batchSource) (int64, error) {
	for _, c := range ics {
		c.reset()
	}
	b, err := nextNonEmpty(next)
	if err != nil {
		return 0, err
	}
	defer b.Release()
	for i, c := range ics {
		if err := encs[i].column(&c.buf, b.Column(i)); err != nil {
			for _, c := range ics {
				c.reset()
			}
			return 0, &routes.ValueError{Column: cols[i], Err: err}
		}
		c.rows = int(b.NumRows())
	}
	return b.NumRows(), nil
}

// inputCol is one column of an INSERT block, already encoded.
type inputCol struct {
	typ  proto.ColumnType
	rows int
	buf  proto.Buffer
}

func (c *inputCol) reset()                       { c.rows = 0; c.buf.Reset() }
func (c *inputCol) Type() proto.ColumnType       { return c.typ }
func (c *inputCol) Rows() int                    { return c.rows }
func (c *inputCol) EncodeColumn(b *proto.Buffer) { b.Buf = append(b.Buf, c.buf.Buf...) }

// WriteColumn hands the encoded column to the connection's vectored write
// without copying it (uncompressed blocks; ch-go flushes before the next
// OnInput resets the buffer). Compressed blocks go through EncodeColumn.
func (c *inputCol) WriteColumn(w *proto.Writer) { w.ChainWrite(c.buf.Buf) }
