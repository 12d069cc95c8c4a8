package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"

	driver "github.com/go-sql-driver/mysql"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
)

// Write streams one pipe into the staging table with LOAD DATA LOCAL
// INFILE 'Reader::<name>': the driver asks a registered handler for an
// io.Reader, which is the read end of a pipe the encoder writes Arrow
// batches into as LOAD DATA text. Nothing touches the disk.
//
// LOAD DATA LOCAL turns data errors (truncation, a bad enum value, a
// duplicate key) into warnings, because the server cannot stop the client
// mid-file; Write reads the warnings afterwards and fails on any, so a
// value is loaded exactly or not at all.
func (st *stage) Write(ctx context.Context, s routes.Stream) (int64, error) {
	q, err := st.loadSQL(s.Schema())
	if err != nil {
		return 0, err
	}
	name := fmt.Sprintf("weir_%s_%p_%d", st.opts.RunID, st, st.pipes.Add(1))
	q = strings.Replace(q, "{reader}", "Reader::"+name, 1)
	pr, pw := io.Pipe()
	driver.RegisterReaderHandler(name, func() io.Reader { return pr })
	defer driver.DeregisterReaderHandler(name)
	produced := make(chan produceResult, 1)
	go func() { produced <- produce(s, pw) }()
	rows, lerr := st.load(ctx, q)
	pr.CloseWithError(errLoadEnded)
	p := <-produced
	switch {
	case p.err != nil && !errors.Is(p.err, errLoadEnded) && !errors.Is(p.err, io.ErrClosedPipe):
		return 0, p.err
	case lerr != nil && ctx.Err() != nil:
		return 0, ctx.Err()
	case lerr != nil:
		return 0, fmt.Errorf("load into %s: %w", st.table, loadHint(lerr))
	case rows != p.rows:
		return 0, fmt.Errorf("load into %s: the server took %d of %d rows", st.table, rows, p.rows)
	}
	return rows, nil
}

var errLoadEnded = errors.New("load into staging ended")

type produceResult struct {
	rows int64
	err  error
}

// produce encodes the stream into w and closes it: cleanly at the end, or
// with the error, which the driver's read then reports.
func produce(s routes.Stream, w *io.PipeWriter) produceResult {
	enc := newEncoder(w)
	err := func() error {
		for s.Next() {
			if err := enc.Encode(s.RecordBatch()); err != nil {
				return err
			}
		}
		if err := s.Err(); err != nil {
			return err
		}
		return enc.Close()
	}()
	w.CloseWithError(err)
	return produceResult{rows: enc.rows, err: err}
}

// loadSQL is the LOAD DATA statement for the stream's columns, with
// {reader} standing for the reader's name.
func (st *stage) loadSQL(schema *arrow.Schema) (string, error) {
	var targets, sets []string
	for i, f := range schema.Fields() {
		c, ok := st.stagedColumn(f.Name)
		if !ok {
			return "", fmt.Errorf("load into %s: the stream has column %q, the staging table does not", st.table, f.Name)
		}
		target, set := c.loadTarget(i)
		targets = append(targets, target)
		if set != "" {
			sets = append(sets, set)
		}
	}
	q := fmt.Sprintf(`LOAD DATA LOCAL INFILE '{reader}' INTO TABLE %s CHARACTER SET binary
FIELDS TERMINATED BY '\t' ENCLOSED BY '' ESCAPED BY '\\' LINES TERMINATED BY '\n' STARTING BY ''
(%s)`, ident(st.table), strings.Join(targets, ", "))
	if len(sets) > 0 {
		q += " SET " + strings.Join(sets, ", ")
	}
	return q, nil
}

func (st *stage) stagedColumn(name string) (stagedColumn, bool) {
	for _, c := range st.cols {
		if c.Name == name {
			return c, true
		}
	}
	return stagedColumn{}, false
}

// load runs the statement on a connection of its own and fails on any
// warning the load left.
func (st *stage) load(ctx context.Context, q string) (int64, error) {
	conn, err := st.e.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	res, err := conn.ExecContext(ctx, q)
	if err != nil {
		return 0, err
	}
	if err := st.repeatedKey(ctx, conn); err != nil {
		return 0, err
	}
	if err := warnings(ctx, conn); err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// repeatedKey refuses a merge whose rows repeat a key: the staging table's
// primary key is the merge key, and LOAD DATA LOCAL skips a row that
// repeats it with warning 1062 (routes.RepeatedKey). The example is the
// key as the server prints it (a composite key's values joined by '-').
func (st *stage) repeatedKey(ctx context.Context, conn querier) error {
	if st.opts.Mode != routes.ModeMerge {
		return nil
	}
	ws, err := warningList(ctx, conn)
	if err != nil {
		return err
	}
	for _, w := range ws {
		if w.code != "1062" {
			continue
		}
		example, _, _ := strings.Cut(strings.TrimPrefix(w.msg, "Duplicate entry '"), "' for key")
		return routes.RepeatedKey(st.info.Ref, st.dest, st.mergeKey(), example)
	}
	return nil
}

// querier is a session or a transaction.
type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// warnings turns the session's warnings into an error.
func warnings(ctx context.Context, conn querier) error {
	ws, err := warningList(ctx, conn)
	if err != nil || len(ws) == 0 {
		return err
	}
	msgs := make([]string, len(ws))
	for i, w := range ws {
		msgs[i] = w.String()
	}
	// a value the column cannot hold: bad input (exit 2); the warning
	// names the column
	return routes.BadInput("the server changed or skipped values (LOAD DATA reports data errors as warnings): %s", strings.Join(msgs, "; "))
}

type warning struct{ level, code, msg string }

func (w warning) String() string { return fmt.Sprintf("%s %s: %s", w.level, w.code, w.msg) }

// warningList reads the session's first warnings.
func warningList(ctx context.Context, conn querier) ([]warning, error) {
	rows, err := conn.QueryContext(ctx, "SHOW WARNINGS LIMIT 5")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ws []warning
	for rows.Next() {
		var w warning
		if err := rows.Scan(&w.level, &w.code, &w.msg); err != nil {
			return nil, err
		}
		ws = append(ws, w)
	}
	return ws, rows.Err()
}

// loadHint explains the errors a server with LOAD DATA LOCAL disabled gives.
func loadHint(err error) error {
	var me *driver.MySQLError
	if errors.As(err, &me) && (me.Number == 1148 || me.Number == 3948 || me.Number == 4166) {
		return fmt.Errorf("%w (the server refuses LOAD DATA LOCAL: run SET GLOBAL local_infile = 1, or set local_infile=1 in its config)", err)
	}
	return err
}
