package clickhouse

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

// The server's hello may take longer than ch-go's per-packet read timeout
// (a loaded server: the free-running race tests saw "handshake: … i/o
// timeout"); once the server has spoken, short deadlines hold again.
func TestHelloConn_WaitsForTheHelloOnly(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	c := &helloConn{Conn: client}
	defer c.Close()
	go func() {
		time.Sleep(3 * pollInterval)
		server.Write([]byte("hello"))
	}()
	c.SetReadDeadline(time.Now().Add(pollInterval))
	buf := make([]byte, 8)
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("first read: %q, %v; want the hello that came after the read timeout", buf[:n], err)
	}
	c.SetReadDeadline(time.Now().Add(pollInterval))
	start := time.Now()
	_, err := c.Read(buf)
	if !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) > 5*pollInterval {
		t.Fatalf("after the hello: %v after %s; want the read timeout (%s)", err, time.Since(start), pollInterval)
	}
}
