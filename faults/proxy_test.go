package faults_test

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// proxy is a TCP proxy between weir and one server. It can cut every
// connection once a number of bytes went one way, and refuse new ones (a
// server that is down or restarting).
type proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	conns   map[net.Conn]bool
	refuse  bool
	cutDown int64 // cut after this many bytes server → weir (0: never)
	cutUp   int64 // cut after this many bytes weir → server (0: never)
	down    atomic.Int64
	up      atomic.Int64
	cuts    atomic.Int64
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() {
		ln.Close()
		p.cutAll()
	})
	go p.serve()
	return p
}

// Addr is the proxy's host:port, to put in weir's URL.
func (p *proxy) Addr() string { return p.ln.Addr().String() }

// set changes the proxy's behaviour for what comes next and resets its
// byte counts.
func (p *proxy) set(refuse bool, cutDown, cutUp int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse, p.cutDown, p.cutUp = refuse, cutDown, cutUp
	p.down.Store(0)
	p.up.Store(0)
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse := p.refuse
		p.mu.Unlock()
		if refuse {
			c.Close()
			continue
		}
		go p.relay(c)
	}
}

func (p *proxy) relay(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[s] = true, true
	p.mu.Unlock()
	go p.pump(s, c, &p.up, func() int64 { return p.limit(false) })
	p.pump(c, s, &p.down, func() int64 { return p.limit(true) })
}

func (p *proxy) limit(down bool) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if down {
		return p.cutDown
	}
	return p.cutUp
}

// pump copies from → to, counting into n, and cuts everything once n
// passes the limit.
func (p *proxy) pump(to, from net.Conn, n *atomic.Int64, limit func() int64) {
	buf := make([]byte, 4096)
	for {
		k, err := from.Read(buf)
		if k > 0 {
			if _, werr := to.Write(buf[:k]); werr != nil {
				break
			}
			if total := n.Add(int64(k)); limit() > 0 && total >= limit() {
				p.cuts.Add(1)
				p.cutAll()
				break
			}
		}
		if err != nil {
			break
		}
	}
	to.Close()
	from.Close()
}

// cutAll closes every live connection, as a dying server or network does.
func (p *proxy) cutAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}
