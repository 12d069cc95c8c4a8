package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/redact"
	"github.com/weirhq/weir/runner"
)

// Named connections outside a dagfile: `weir transfer app lake`, `weir
// read app`, `weir conns`. A name is a connection of the dagfile (-f,
// default weir.yaml in the current directory) or a WEIR_CONN_<NAME>
// variable; the dagfile's wins.

func init() { commands = append(commands, newConnsCmd) }

// EnvPrefix starts the variables that define connections: WEIR_CONN_APP
// is the connection app (the name lower-cased).
const connEnvPrefix = "WEIR_CONN_"

// namedConn is one named connection.
type namedConn struct {
	Name  string
	URL   string // expanded, a secret: never printed
	Shown string // what may be printed: the URL as written, redacted
	Where string // weir.yaml:12, or $WEIR_CONN_APP
	Err   error  // the URL could not be expanded (an unset variable)
}

func (c namedConn) scheme() string {
	if u, err := routes.ParseURL(c.URL); err == nil {
		return u.Scheme()
	}
	if s, _, ok := strings.Cut(c.Shown, "://"); ok && !strings.Contains(s, "$") {
		return strings.ToLower(s)
	}
	return "?"
}

// connFile is the -f flag of the commands that take connection names.
type connFile struct {
	path     string
	explicit bool
}

func addConnFile(cmd *cobra.Command, cf *connFile) {
	cmd.Flags().StringVarP(&cf.path, "file", "f", "weir.yaml", "dagfile whose connections SRC/DST may name (also WEIR_CONN_<NAME> variables)")
	pre := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		cf.explicit = c.Flags().Changed("file")
		if pre != nil {
			return pre(c, args)
		}
		return nil
	}
}

// loadConns reads the named connections: the dagfile's (when the file
// exists, or was named with -f) and the WEIR_CONN_* variables.
func loadConns(cf connFile) ([]namedConn, error) {
	var out []namedConn
	seen := map[string]bool{}
	if _, err := os.Stat(cf.path); err == nil || cf.explicit {
		f, err := dagfile.LoadLazy(cf.path, os.LookupEnv)
		if err != nil {
			return nil, &ExitCodeError{Code: ExitBadInput, Err: fmt.Errorf("connections from %s: %w", cf.path, err)}
		}
		base := filepath.Base(cf.path)
		for name, c := range f.Connections {
			nc := namedConn{Name: name, Shown: redact.String(c.Raw), Where: fmt.Sprintf("%s:%d", base, c.Line)}
			if c.Expanded() {
				nc.URL = runner.ResolveURL(c.URL(), f.Dir)
			} else {
				nc.Err = unsetVars(c)
			}
			out = append(out, nc)
			seen[name] = true
		}
	}
	fromEnv := map[string]int{} // name → its index in out
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		suffix, ok := strings.CutPrefix(k, connEnvPrefix)
		if !ok || suffix == "" {
			continue
		}
		name := strings.ToLower(suffix)
		if seen[name] {
			continue
		}
		nc := namedConn{Name: name, URL: v, Shown: redact.String(v), Where: "$" + k}
		switch {
		case v == "":
			nc.Err = routes.BadInput("$%s is empty", k)
		case !nameRE.MatchString(name):
			// weir would take the word for a path and never look it up.
			nc.Err = routes.BadInput("$%s: %q cannot name a connection (a letter or _ first, then letters, digits, _ or -); rename the variable", k, name)
		}
		if i, ok := fromEnv[name]; ok {
			// Two spellings of one name: which one the environment lists
			// first is no way to choose a server.
			both := routes.BadInput("%s and $%s both define connection %s: unset one", out[i].Where, k, name)
			out[i].Err, nc.Err = both, both
		}
		fromEnv[name] = len(out)
		out = append(out, nc)
	}
	slices.SortFunc(out, func(a, b namedConn) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// unsetVars names the variables a dagfile connection lacks.
func unsetVars(c *dagfile.Connection) error {
	var unset []string
	for _, v := range c.Vars {
		if val, ok := os.LookupEnv(v); !ok || val == "" {
			unset = append(unset, v)
		}
	}
	return routes.BadInput("connection %s (%s): environment variable %s is not set", c.Name, redact.String(c.Raw), strings.Join(unset, ", "))
}

// nameRE is what a connection name looks like; anything else (a URL, a
// path with / or a dot) is used as it is.
var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// resolveEndpoint turns a SRC/DST argument into a URL: a URL or a path is
// kept; a name is looked up. A name-shaped word that names no connection
// and no file is bad input with "did you mean".
func resolveEndpoint(arg string, cf connFile) (string, error) {
	if !nameRE.MatchString(arg) {
		return arg, nil
	}
	conns, err := loadConns(cf)
	if err != nil {
		return "", err
	}
	if i := findConn(conns, arg); i >= 0 {
		if conns[i].Err != nil {
			return "", conns[i].Err
		}
		return conns[i].URL, nil
	}
	if _, err := os.Stat(arg); err == nil {
		return arg, nil // a directory or file named like a word: a bare path
	}
	return "", unknownConn(arg, conns, cf)
}

// findConn is the index of the connection arg names, or -1: a dagfile's
// name exactly, a variable's in any case (WEIR_CONN_APP is app and APP).
func findConn(conns []namedConn, arg string) int {
	return slices.IndexFunc(conns, func(c namedConn) bool {
		return c.Name == arg || (strings.HasPrefix(c.Where, "$") && strings.EqualFold(c.Name, arg))
	})
}

// unknownConn is the bad input for a word that names no connection.
func unknownConn(arg string, conns []namedConn, cf connFile) error {
	names := make([]string, len(conns))
	for i, c := range conns {
		names[i] = c.Name
	}
	msg := fmt.Sprintf("%q is not a URL, a path or a known connection", arg)
	if m := routes.Closest(arg, names); m != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", m)
	}
	if len(names) == 0 {
		msg += fmt.Sprintf("; no connections are defined: add them to %s or set %s<NAME>", cf.path, connEnvPrefix)
	} else {
		msg += "; known: " + strings.Join(names, ", ") + " (weir conns list)"
	}
	return routes.BadInput("%s; a directory still to be created is written ./%s", msg, arg)
}

func newConnsCmd() *cobra.Command {
	var cf connFile
	cmd := &cobra.Command{
		Use:   "conns list|test [NAME…]",
		Short: "List or test the named connections (the dagfile's and WEIR_CONN_<NAME> variables)",
		Long: `Named connections can stand for a URL in weir transfer and weir read:
weir transfer app lake --table public.orders. A name is a connection of the
dagfile (-f, default weir.yaml in the current directory) or an environment
variable WEIR_CONN_<NAME> (WEIR_CONN_APP is app); the dagfile's wins.
Passwords are never printed.`,
	}
	cmd.PersistentFlags().StringVarP(&cf.path, "file", "f", "weir.yaml", "the dagfile whose connections to read")
	explicit := func(c *cobra.Command) { cf.explicit = c.Flags().Changed("file") }
	list := &cobra.Command{
		Use:   "list",
		Short: "Names, schemes and where each is defined (passwords redacted)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			explicit(c)
			conns, err := loadConns(cf)
			if err != nil {
				return err
			}
			return printConns(c.OutOrStdout(), conns)
		},
	}
	test := &cobra.Command{
		Use:   "test [NAME…]",
		Short: "Connect to each (all by default): reachable, credentials, and the roles weir can use it in",
		RunE: func(c *cobra.Command, names []string) error {
			explicit(c)
			conns, err := loadConns(cf)
			if err != nil {
				return err
			}
			return testConns(c.Context(), c.OutOrStdout(), conns, names, cf)
		},
	}
	cmd.AddCommand(list, test)
	for _, c := range []*cobra.Command{cmd, list, test} {
		usageErrors(c)
	}
	return cmd
}

func printConns(w io.Writer, conns []namedConn) error {
	if len(conns) == 0 {
		_, err := fmt.Fprintln(w, "no named connections (a dagfile's connections, or WEIR_CONN_<NAME> variables)")
		return err
	}
	for _, c := range conns {
		note := c.Shown
		if c.Err != nil {
			note += "  (" + strings.TrimPrefix(c.Err.Error(), routes.ErrBadInput.Error()+": ") + ")"
		}
		fmt.Fprintf(w, "%-16s %-12s %-20s %s\n", c.Name, c.scheme(), c.Where, note)
	}
	return nil
}

// testTimeout bounds one connection's test.
const testTimeout = 20 * time.Second

// testConns opens each named connection and says what weir can do with
// it; the error joins the failures (the exit code: 2 when a URL or its
// credentials are wrong, else 1).
func testConns(ctx context.Context, w io.Writer, conns []namedConn, names []string, cf connFile) error {
	picked := conns
	if len(names) > 0 {
		picked = nil
		for _, n := range names {
			i := findConn(conns, n)
			if i < 0 {
				return unknownConn(n, conns, cf)
			}
			picked = append(picked, conns[i])
		}
	}
	if len(picked) == 0 {
		fmt.Fprintln(w, "no named connections to test")
		return nil
	}
	var errs []error
	for _, c := range picked {
		line, err := testConn(ctx, c)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.Name, err))
			line = "FAILED: " + oneLineErr(err)
		}
		fmt.Fprintf(w, "%-16s %-12s %s\n", c.Name, c.scheme(), line)
	}
	if len(errs) > 0 {
		return &connsFailed{n: len(picked), errs: errs}
	}
	return nil
}

// connsFailed is the summary line of a test that failed; each failure was
// printed on its own line, and they decide the exit code.
type connsFailed struct {
	n    int
	errs []error
}

func (e *connsFailed) Error() string {
	return fmt.Sprintf("%d of %d connections failed", len(e.errs), e.n)
}

func (e *connsFailed) Unwrap() []error { return e.errs }

func oneLineErr(err error) string {
	return strings.Join(strings.Fields(redact.String(err.Error())), " ")
}

// testConn opens c and lists its roles: source and destination from the
// scheme registry, capture checked on the server.
func testConn(ctx context.Context, c namedConn) (string, error) {
	if c.Err != nil {
		return "", c.Err
	}
	ctx, cancel := context.WithTimeout(ctx, testTimeout)
	defer cancel()
	ep, err := routes.Open(ctx, c.URL)
	if err != nil {
		return "", err
	}
	defer ep.Close()
	var roles []string
	info, _ := routes.Describe(c.scheme())
	if _, ok := routes.As[routes.Source](ep); ok && info.Source {
		roles = append(roles, "source")
	}
	if _, ok := routes.As[routes.Destination](ep); ok && info.Destination {
		modes := []string{string(routes.ModeReplace)}
		for _, m := range info.Modes {
			modes = append(modes, string(m))
		}
		roles = append(roles, "destination ("+strings.Join(modes, ", ")+")")
	}
	if info.Capture {
		if cc, ok := routes.As[routes.CaptureChecker](ep); ok {
			ok, why, err := cc.CheckCapture(ctx)
			switch {
			case err != nil:
				roles = append(roles, "capture: unknown ("+oneLineErr(err)+")")
			case ok:
				roles = append(roles, "capture ("+why+")")
			default:
				roles = append(roles, "no capture: "+why)
			}
		}
	}
	if rc, ok := routes.As[routes.ReachChecker](ep); ok {
		empty, err := rc.CheckReach(ctx)
		if err != nil {
			return "", err
		}
		if empty {
			roles = slices.DeleteFunc(roles, func(r string) bool { return r == "source" })
			roles = append(roles, "nothing to read yet (missing or empty)")
		}
	}
	return "ok: " + strings.Join(roles, "; "), nil
}
