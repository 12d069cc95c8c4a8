package mysql

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/routestest"
)

// prepareStage probes src.name and prepares dst.name with run id run.
func prepareStage(t *testing.T, ctx context.Context, src, dst *mysqltest.Fixture, name string, mode routes.Mode, run string) (routes.Stage, error) {
	t.Helper()
	e := openEndpoint(t, src, "")
	info, err := e.Probe(ctx, ref(src, name))
	if err != nil {
		t.Fatal(err)
	}
	d := openEndpoint(t, dst, "")
	return d.Prepare(ctx, info, routes.WriteOptions{Table: ref(dst, name), Mode: mode, RunID: run, Key: info.PrimaryKey})
}

func TestPrepare_Locked(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	src, dst := mysqltest.New(t), mysqltest.New(t)
	src.Create(t, ctx, "t", routestest.Rows(1, 10))
	first, err := prepareStage(t, ctx, src, dst, "t", routes.ModeReplace, "run00001")
	if err != nil {
		t.Fatal(err)
	}
	_, err = prepareStage(t, ctx, src, dst, "t", routes.ModeReplace, "run00002")
	var le *routes.LockedError
	if !errors.Is(err, routes.ErrLocked) || !errors.As(err, &le) {
		t.Fatalf("second Prepare: got %v, want ErrLocked", err)
	}
	if le.RunID != "run00001" || le.Since.IsZero() || le.Table != dst.Ref("t") {
		t.Errorf("LockedError %+v does not name the holding run", le)
	}
	t.Log(err)
	if err := first.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	second, err := prepareStage(t, ctx, src, dst, "t", routes.ModeReplace, "run00003")
	if err != nil {
		t.Fatalf("Prepare after the holder aborted: %v", err)
	}
	second.Abort(ctx)
}

// TestPrepare_DropsStale: a killed run left a staging table (its comment
// names the destination, no session holds the lock) and a replaced table
// (the swapped-in destination's comment names the run); the next run drops
// both and leaves other tables alone, _weir_old_ ones that no mark names
// included.
func TestPrepare_DropsStale(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	src, dst := mysqltest.New(t), mysqltest.New(t)
	src.Create(t, ctx, "t", routestest.Rows(1, 10))
	dest := ref(dst, "t")
	stale := stageName("t", "dead0001")
	other := stageName("t2", "dead0002")
	dst.Exec(t, ctx,
		fmt.Sprintf("CREATE TABLE %s (id INT) COMMENT = %s", dst.Ref(stale), quoteLiteral(stageComment(dest, "dead0001", 999999))),
		fmt.Sprintf("CREATE TABLE %s (id INT) COMMENT = %s", dst.Ref(other), quoteLiteral(stageComment(ref(dst, "t2"), "dead0002", 999999))),
		fmt.Sprintf("CREATE TABLE %s (id INT) COMMENT = %s", dst.Ref("t"), quoteLiteral(stageComment(dest, "dead0001", 999999))),
		fmt.Sprintf("CREATE TABLE %s (id INT)", dst.Ref(oldName("t", "dead0001"))),
		fmt.Sprintf("CREATE TABLE %s (id INT)", dst.Ref(oldName("t", "backup"))),
		fmt.Sprintf("CREATE TABLE %s (id INT)", dst.Ref(oldName("t_x", "dead0001"))))
	if left := dst.Staging(t, ctx, "t"); len(left) != 3 {
		t.Fatalf("setup: %v", left)
	}
	stage, err := prepareStage(t, ctx, src, dst, "t", routes.ModeReplace, "live0001")
	if err != nil {
		t.Fatal(err)
	}
	defer stage.Abort(ctx)
	tables := strings.Join(slices.Sorted(slices.Values(queryStrings(t, ctx, dst, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", dst.Database))), " ")
	want := strings.Join(slices.Sorted(slices.Values([]string{"t", oldName("t", "backup"), oldName("t_x", "dead0001"), stageName("t", "live0001"), other, "_weir_state"})), " ")
	if tables != want {
		t.Errorf("tables after Prepare:\n got %s\nwant %s", tables, want)
	}
}

func TestAbort_KeepsTable(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	src, dst := mysqltest.New(t), mysqltest.New(t)
	src.Create(t, ctx, "t", routestest.Rows(1, 20))
	dst.Create(t, ctx, "t", routestest.Rows(1, 5))
	for _, mode := range []routes.Mode{routes.ModeReplace, routes.ModeAppend, routes.ModeMerge} {
		stage, err := prepareStage(t, ctx, src, dst, "t", mode, "abort"+string(mode[0]))
		if err != nil {
			t.Fatal(err)
		}
		if err := stage.Abort(ctx); err != nil {
			t.Fatal(err)
		}
		if err := stage.Abort(ctx); err != nil {
			t.Fatalf("second Abort: %v", err)
		}
		if got, _ := dst.Read(t, ctx, "t"); len(got) != 5 {
			t.Errorf("%s: destination has %d rows after Abort, want 5", mode, len(got))
		}
		if left := dst.Staging(t, ctx, "t"); len(left) > 0 {
			t.Errorf("%s: staging left: %v", mode, left)
		}
	}
}

func TestStageName_Fits(t *testing.T) {
	long := strings.Repeat("ü", 60)
	for _, name := range []string{stageName(long, "12345678"), oldName(long, "12345678"), stageName("short", "12345678")} {
		if n := len([]rune(name)); !maxIdent(name) {
			t.Errorf("%s: %d characters", name, n)
		}
	}
	if stageName(long, "a") == stageName(long+"x", "a") {
		t.Error("long names do not stay distinct")
	}
	if got := lockName(routes.TableRef{Schema: strings.Repeat("d", 64), Name: strings.Repeat("t", 64)}); len(got) > maxLockName {
		t.Errorf("lock name %q too long", got)
	}
}

func TestOpen_NeverShowsPassword(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	f := mysqltest.New(t)
	u, _ := routes.ParseURL(f.URL())
	host := u.URL().Host
	for _, raw := range []string{
		"mysql://root:Sup3rSecretPw@" + host + "/" + f.Database,
		"mariadb://nobody:Sup3rSecretPw@" + host + "/" + f.Database,
		"mysql://root:Sup3rSecretPw@" + host + "/" + f.Database + "?zero_dates=maybe",
		"mysql://root:Sup3rSecretPw@127.0.0.1:1/" + f.Database,
	} {
		_, err := routes.Open(ctx, raw)
		if err == nil {
			t.Fatalf("%s: opened", routes.Redact(raw))
		}
		if strings.Contains(err.Error(), "Sup3rSecretPw") {
			t.Errorf("error shows the password: %v", err)
		}
		t.Log(err)
	}
}

func TestPrepare_CreatesDatabase(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	src := mysqltest.New(t)
	src.Create(t, ctx, "t", routestest.Rows(1, 3))
	db := routestest.Name("weir_t")
	t.Cleanup(func() {
		ctx, cancel := routestest.CleanupContext()
		defer cancel()
		src.DB.ExecContext(ctx, "DROP DATABASE IF EXISTS "+db)
	})
	spec := routes.CopySpec{Table: ref(src, "t"), DestTable: routes.TableRef{Schema: db, Name: "t"}}
	if _, err := copyOnce(ctx, src, src, spec); err != nil {
		t.Fatal(err)
	}
	if n := count(t, ctx, src, db+".t"); n != 3 {
		t.Errorf("%d rows in the new database, want 3", n)
	}
}
