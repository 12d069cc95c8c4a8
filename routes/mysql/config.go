package mysql

import (
	"net"
	"net/url"
	"strings"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/weirhq/weir/routes"
)

// DefaultPort is MySQL's and MariaDB's TCP port.
const DefaultPort = "3306"

// URL parameters weir reads itself; every other parameter goes to the
// driver (tls=true, timeout=5s, …).
const (
	// ParamZeroDates: "error" (default) fails a read that meets a zero date
	// ('0000-00-00', or a zero month or day); "null" reads them as NULL.
	ParamZeroDates = "zero_dates"
	// ParamTinyint1: "bool" (default) reads tinyint(1) as Arrow bool and fails
	// on a value other than 0 and 1; "int" reads it as int8.
	ParamTinyint1 = "tinyint1"
	// ParamTime: "time" (default) reads TIME as time64[us] and fails on a
	// value outside 00:00:00..24:00:00; "duration" reads TIME as
	// duration[us], which holds MySQL's whole ±838:59:59 range.
	ParamTime = "time"
)

// options are the read choices the URL makes.
type options struct {
	zeroDatesNull bool
	tinyint1Int   bool
	timeDuration  bool
}

// config turns the URL into the driver's config: no parseTime (weir decodes
// the text itself), parameters interpolated client-side (no prepare round
// trips), UTC sessions.
func config(u *routes.URL) (*driver.Config, options, error) {
	raw := u.URL()
	q := raw.Query()
	opts, err := parseOptions(q)
	if err != nil {
		return nil, opts, err
	}
	dsn := "tcp(" + hostPort(raw) + ")/" + strings.TrimPrefix(raw.Path, "/")
	if enc := q.Encode(); enc != "" {
		dsn += "?" + enc
	}
	cfg, err := driver.ParseDSN(dsn)
	if err != nil {
		return nil, opts, routes.BadInput("mysql URL %s: %s", u, routes.Scrub(err.Error(), u.Password()))
	}
	cfg.User = raw.User.Username()
	cfg.Passwd = u.Password()
	cfg.ParseTime = false
	cfg.InterpolateParams = true
	cfg.AllowAllFiles = false
	cfg.Loc = time.UTC
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	for k := range cfg.Params { // the driver sends SET <k>=<v>: the server takes SQL_MODE for sql_mode
		if strings.EqualFold(k, "sql_mode") {
			return nil, opts, routes.BadInput("mysql URL %s: parameter %s: weir sets the session's sql_mode itself (%s: strict, so a value a column cannot hold fails instead of landing changed, and literals quoted as weir writes them); remove it from the URL",
				u, k, strings.Trim(sessionParams["sql_mode"], "'"))
		}
	}
	for k, v := range sessionParams {
		if _, set := cfg.Params[k]; !set {
			cfg.Params[k] = v
		}
	}
	return cfg, opts, nil
}

func hostPort(u *url.URL) string {
	host := u.Hostname()
	if host == "" {
		host = "127.0.0.1"
	}
	port := u.Port()
	if port == "" {
		port = DefaultPort
	}
	return net.JoinHostPort(host, port)
}

// parseOptions takes weir's own parameters out of q.
func parseOptions(q url.Values) (options, error) {
	var o options
	choices := []struct {
		param, def, alt string
		set             *bool
	}{
		{ParamZeroDates, "error", "null", &o.zeroDatesNull},
		{ParamTinyint1, "bool", "int", &o.tinyint1Int},
		{ParamTime, "time", "duration", &o.timeDuration},
	}
	for _, c := range choices {
		v := q.Get(c.param)
		q.Del(c.param)
		switch v {
		case "", c.def:
		case c.alt:
			*c.set = true
		default:
			return o, routes.BadInput("URL parameter %s=%q: use %s or %s", c.param, v, c.def, c.alt)
		}
	}
	return o, nil
}
