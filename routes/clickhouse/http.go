package clickhouse

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/ClickHouse/ch-go/proto"
)

// httpConn talks to the HTTP interface: statements and SELECT … FORMAT
// Native in request bodies, INSERT data as streamed gzip bodies.
type httpConn struct {
	base     url.URL // scheme://host:port/
	user     string
	password string
	db       string
	opts     Options
	client   *http.Client
}

var _ conn = (*httpConn)(nil)

// newHTTPConn addresses the HTTP interface of u's host. For a native URL
// (port 9000) the HTTP port comes from the http_port option.
func newHTTPConn(u *url.URL, db string, o Options, native bool) *httpConn {
	scheme, host := "http", u.Host
	if strings.HasSuffix(u.Scheme, "https") || (native && o.Secure) {
		scheme = "https"
	}
	switch {
	case native:
		host = net.JoinHostPort(u.Hostname(), strconv.Itoa(o.HTTPPort))
	case u.Port() == "" && scheme == "https":
		host = net.JoinHostPort(u.Hostname(), "8443")
	case u.Port() == "":
		host = net.JoinHostPort(u.Hostname(), strconv.Itoa(DefaultHTTPPort))
	}
	pw, _ := u.User.Password()
	return &httpConn{base: url.URL{Scheme: scheme, Host: host, Path: "/"}, user: u.User.Username(),
		password: pw, db: db, opts: o, client: &http.Client{}}
}

// post sends body to the server with the given URL parameters and returns
// the response of a successful request; a server exception is a *serverError.
func (h *httpConn) post(ctx context.Context, params url.Values, body io.Reader, gzipped bool) (*http.Response, error) {
	u := h.base
	params.Set("database", h.db)
	u.RawQuery = params.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), body)
	if err != nil {
		return nil, err
	}
	if h.user != "" || h.password != "" {
		req.SetBasicAuth(h.user, h.password)
	}
	if gzipped {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, readServerError(resp)
	}
	return resp, nil
}

var codeRE = regexp.MustCompile(`Code: (\d+)`)

func readServerError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	msg := strings.TrimSpace(string(b))
	code := 0
	if m := codeRE.FindStringSubmatch(msg); m != nil {
		code, _ = strconv.Atoi(m[1])
	}
	if msg == "" {
		msg = resp.Status
	}
	return &serverError{Code: code, Message: msg}
}

func (h *httpConn) exec(ctx context.Context, sql string) error {
	resp, err := h.post(ctx, url.Values{}, strings.NewReader(sql), false)
	if err != nil {
		return fmt.Errorf("%s: %w", stmtName(sql), err)
	}
	io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// selectNative starts SELECT … FORMAT Native and returns the body.
func (h *httpConn) selectNative(ctx context.Context, sql string) (io.ReadCloser, error) {
	resp, err := h.post(ctx, url.Values{}, strings.NewReader(sql+" FORMAT Native"), false)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

func (h *httpConn) query(ctx context.Context, sql string, s sink) error {
	body, err := h.selectNative(ctx, sql)
	if err != nil {
		return err
	}
	defer body.Close()
	return readNative(ctx, body, s)
}

// readNative decodes a Native-format stream block by block into s.
func readNative(ctx context.Context, r io.Reader, s sink) error {
	br := bufio.NewReaderSize(r, 128<<10)
	pr := proto.NewReader(br) // shares br: it is a large enough bufio.Reader
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := br.Peek(1); err == io.EOF {
			return nil
		}
		var b proto.Block
		if err := b.DecodeRawBlock(pr, 0, s); err != nil {
			return fmt.Errorf("decode native block: %w", err)
		}
		if err := s.blockDone(ctx); err != nil {
			return err
		}
	}
}

// insertBody runs an INSERT whose data is body (uncompressed).
func (h *httpConn) insertBody(ctx context.Context, sql string, body io.Reader) error {
	resp, err := h.post(ctx, url.Values{"query": {sql}}, body, false)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// ping checks the HTTP interface answers.
func (h *httpConn) ping(ctx context.Context) error {
	u := h.base
	u.Path = "/ping"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("ping %s: %s", u.Host, resp.Status)
	}
	return nil
}

func (h *httpConn) close() error {
	h.client.CloseIdleConnections()
	return nil
}
