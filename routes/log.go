package routes

import (
	"context"
	"log/slog"
)

// LogSQL logs a statement sent to u's server at debug level on slog's
// default logger (the CLI's --log-level debug), secrets masked: URLs'
// credentials, secret parameters and u's own password. It costs one
// Enabled check when debug is off.
func LogSQL(ctx context.Context, u *URL, sql string) {
	l := slog.Default()
	if !l.Enabled(ctx, slog.LevelDebug) {
		return
	}
	l.DebugContext(ctx, "sql", "route", u.Scheme(), "server", u.Identity(), "stmt", Scrub(Redact(sql), u.Password()))
}
