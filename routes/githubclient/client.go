// Package githubclient is the GitHub REST client the GitHub routes share
// (github://, github+api://): go-github with the token and endpoint rules,
// weir's waits around GitHub's rate limits, and the mapping of refused
// credentials to bad input.
package githubclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v75/github"

	"github.com/weirhq/weir/routes"
)

// Client is the REST client with weir's retry rules around each call.
type Client struct {
	c    *github.Client
	wait Waiter
}

// New makes the go-github client for endpoint (default: the public API),
// authenticated by token when there is one, else by the GITHUB_TOKEN
// environment variable.
func New(endpoint, token string) (*Client, error) {
	if token == "" {
		token = os.Getenv("GITHUB_TOKEN")
	}
	c := github.NewClient(&http.Client{})
	if token != "" {
		c = c.WithAuthToken(token)
	}
	if endpoint != "" {
		u, err := url.Parse(endpoint)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("%q is not an http(s) URL", endpoint)
		}
		if !strings.HasSuffix(u.Path, "/") {
			u.Path += "/"
		}
		c.BaseURL = u
	}
	return &Client{c: c, wait: SleepWaiter{}}, nil
}

// Refused turns an API error into bad input when the server refused the
// credentials (401) or the access (403, forbidden says what is missing),
// else wraps it; the token is never in the message (go-github errors name
// the request URL, which never holds it).
func Refused(err error, what, forbidden string) error {
	switch Status(err) {
	case http.StatusUnauthorized:
		return routes.BadInput("%s: GitHub refused the token (401 Bad credentials): check GITHUB_TOKEN or ?token=", what)
	case http.StatusForbidden:
		return routes.BadInput("%s: GitHub refused access (403): %s", what, forbidden)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Status is an API error's HTTP status, 0 for none, -1 for an error
// without a response.
func Status(err error) int {
	if err == nil {
		return 0
	}
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	return -1
}

// maxAttempts bounds the tries of one API call through rate limits and
// server errors.
const maxAttempts = 6

// Waiter sleeps between tries.
type Waiter interface {
	Wait(ctx context.Context, d time.Duration) error
}

// SleepWaiter waits on a timer, ending at once when ctx is cancelled.
type SleepWaiter struct{}

// Wait sleeps d or until ctx ends.
func (SleepWaiter) Wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Call runs one API request, waiting out GitHub's rate limits: the primary
// limit (403/429 with X-RateLimit-Remaining: 0, or a previous answer's
// Remaining 0, which go-github remembers) until X-RateLimit-Reset, the
// secondary one and any 429 for Retry-After (a minute when absent), and a
// 5xx with exponential backoff. Each wait is logged ("github rate limit:
// waiting 42s until …"), so a run that must wait says so; after
// maxAttempts tries the call fails saying what it still waits for.
func (a *Client) Call(ctx context.Context, what string, fn func(*github.Client) (*github.Response, error)) error {
	backoff := time.Second
	for attempt := 1; ; attempt++ {
		resp, err := fn(a.c)
		if err == nil {
			return nil
		}
		d, why, ok := retryAfter(err, resp, backoff)
		if !ok || attempt == maxAttempts || ctx.Err() != nil {
			if ok {
				return fmt.Errorf("%s: still %s after %d tries: %w", what, why, attempt, err)
			}
			return err
		}
		if why == "failing" {
			backoff *= 2
		}
		d = d.Round(time.Second)
		msg := fmt.Sprintf("github rate limit: waiting %s until %s", d, time.Now().Add(d).UTC().Format(time.TimeOnly+" UTC"))
		if why == "failing" {
			msg = fmt.Sprintf("github: waiting %s before retrying a failing request", d)
		}
		slog.WarnContext(ctx, msg, "request", what, "reason", why, "attempt", attempt)
		if err := a.wait.Wait(ctx, d); err != nil {
			return fmt.Errorf("%s: waiting out %s: %w", what, why, err)
		}
	}
}

// retryAfter says how long to wait before retrying err, and why; ok is
// false for an error a retry cannot fix.
func retryAfter(err error, resp *github.Response, backoff time.Duration) (time.Duration, string, bool) {
	var rl *github.RateLimitError
	var ab *github.AbuseRateLimitError
	switch {
	case errors.As(err, &rl):
		return max(time.Until(rl.Rate.Reset.Time), 0) + time.Second, "rate limited until X-RateLimit-Reset", true
	case errors.As(err, &ab):
		if ab.RetryAfter != nil {
			return max(*ab.RetryAfter, 0), "over the secondary rate limit (Retry-After)", true
		}
		return time.Minute, "over the secondary rate limit", true
	}
	if resp == nil || resp.Response == nil {
		return 0, "", false
	}
	switch code := resp.StatusCode; {
	case code == http.StatusTooManyRequests:
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
			return time.Duration(s) * time.Second, "rate limited (429, Retry-After)", true
		}
		return time.Minute, "rate limited (429)", true
	case code >= 500:
		return backoff, "failing", true
	}
	return 0, "", false
}
