package githubclient

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v75/github"

	"github.com/weirhq/weir/routes"
)

// retryAfter: what is waited for, how long, and what is not retried.
func TestRetryAfter(t *testing.T) {
	resp := func(code int, h http.Header) *github.Response {
		return &github.Response{Response: &http.Response{StatusCode: code, Header: h}}
	}
	secs := func(n int) *time.Duration { d := time.Duration(n) * time.Second; return &d }
	for _, c := range []struct {
		name  string
		err   error
		resp  *github.Response
		least time.Duration
		most  time.Duration
		retry bool
	}{
		{"primary limit", &github.RateLimitError{Rate: github.Rate{Reset: github.Timestamp{Time: time.Now().Add(3 * time.Second)}}}, nil, 3 * time.Second, 4 * time.Second, true},
		{"primary limit already reset", &github.RateLimitError{Rate: github.Rate{Reset: github.Timestamp{Time: time.Now().Add(-time.Hour)}}}, nil, time.Second, time.Second, true},
		{"secondary with Retry-After", &github.AbuseRateLimitError{RetryAfter: secs(7)}, nil, 7 * time.Second, 7 * time.Second, true},
		{"secondary without", &github.AbuseRateLimitError{}, nil, time.Minute, time.Minute, true},
		{"429 with Retry-After", errors.New("429"), resp(429, http.Header{"Retry-After": {"5"}}), 5 * time.Second, 5 * time.Second, true},
		{"429 without", errors.New("429"), resp(429, http.Header{}), time.Minute, time.Minute, true},
		{"502", errors.New("502"), resp(502, nil), 2 * time.Second, 2 * time.Second, true},
		{"404", errors.New("404"), resp(404, nil), 0, 0, false},
		{"no response", errors.New("dial"), nil, 0, 0, false},
	} {
		d, _, ok := retryAfter(c.err, c.resp, 2*time.Second)
		if ok != c.retry || d < c.least || d > c.most {
			t.Errorf("%s: wait %v retry %v, want %v..%v retry %v", c.name, d, ok, c.least, c.most, c.retry)
		}
	}
}

// Refused: 401 and 403 are bad input naming what to do; others wrap.
func TestRefused(t *testing.T) {
	er := func(code int) error {
		return &github.ErrorResponse{Response: &http.Response{StatusCode: code, Request: &http.Request{}}}
	}
	if err := Refused(er(401), "read x", "y"); !errors.Is(err, routes.ErrBadInput) {
		t.Errorf("401: %v", err)
	}
	if err := Refused(er(403), "read x", "the token lacks z"); !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "the token lacks z") {
		t.Errorf("403: %v", err)
	}
	if err := Refused(er(500), "read x", "y"); errors.Is(err, routes.ErrBadInput) || Status(err) != 500 {
		t.Errorf("500: %v", err)
	}
}
