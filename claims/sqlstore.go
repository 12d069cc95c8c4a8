package claims

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weirhq/weir/routes"
)

// sqlStore is the claim store over one SQL table; dialect holds what
// PostgreSQL and SQLite spell differently. Every mutation is one
// transaction (SQLite's begins IMMEDIATE, so writers queue on the busy
// timeout instead of failing a lock upgrade).
type sqlStore struct {
	db      *sql.DB
	table   string // quoted, qualified
	dialect dialect
}

type dialect struct {
	// nowMs is the SQL expression of the store's clock in milliseconds.
	nowMs string
	// skipLocked follows the free-bucket subquery: PostgreSQL's FOR
	// UPDATE SKIP LOCKED lets concurrent claims take different buckets
	// without waiting; SQLite serializes writers and needs none.
	skipLocked string
	// planLock serializes Plan per task, createLock the table's creation,
	// inside their transactions ("" when a transaction is exclusive).
	planLock, createLock string
	// param turns the queries' $N placeholders into the dialect's.
	param func(q string) string
}

func (s *sqlStore) q(q string) string {
	return s.dialect.param(strings.ReplaceAll(strings.ReplaceAll(q, "{t}", s.table), "{now}", s.dialect.nowMs))
}

// create makes the table (and the schema, when one is named) if missing,
// under the dialect's create lock: PostgreSQL's IF NOT EXISTS races
// between workers that start together (a unique violation on the
// catalog), so they queue on an advisory lock.
func (s *sqlStore) create(ctx context.Context, schema string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if s.dialect.createLock != "" {
			if _, err := tx.ExecContext(ctx, s.dialect.createLock); err != nil {
				return fmt.Errorf("claims: create %s: lock: %w", s.table, err)
			}
		}
		if schema != "" {
			if _, err := tx.ExecContext(ctx, "CREATE SCHEMA IF NOT EXISTS "+quoteIdent(schema)); err != nil {
				return fmt.Errorf("claims: schema %s: %w", schema, err)
			}
		}
		_, err := tx.ExecContext(ctx, s.q(`CREATE TABLE IF NOT EXISTS {t} (
	task TEXT NOT NULL,
	bucket INTEGER NOT NULL,
	buckets INTEGER NOT NULL,
	owner TEXT,
	token BIGINT NOT NULL DEFAULT 0,
	expires_ms BIGINT,
	done BOOLEAN NOT NULL DEFAULT FALSE,
	PRIMARY KEY (task, bucket))`))
		if err != nil {
			return fmt.Errorf("claims: create %s: %w", s.table, err)
		}
		return s.checkTable(ctx, tx)
	})
}

// claimColumns are the columns of the claim table create makes.
var claimColumns = []string{"task", "bucket", "buckets", "owner", "token", "expires_ms", "done"}

// checkTable refuses a claim table that is not weir's (another tool's
// table of that name, which CREATE TABLE IF NOT EXISTS kept): weir
// would plan buckets into it, and used to fail on its columns at the
// first plan, exit 1.
func (s *sqlStore) checkTable(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, s.q(`SELECT * FROM {t} WHERE 1 = 0`))
	if err != nil {
		return fmt.Errorf("claims: check %s: %w", s.table, err)
	}
	have, err := rows.Columns()
	rows.Close()
	if err != nil {
		return fmt.Errorf("claims: check %s: %w", s.table, err)
	}
	var missing []string
	for _, c := range claimColumns {
		if !slices.ContainsFunc(have, func(h string) bool { return strings.EqualFold(h, c) }) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s is not weir's claim table: it has no column %s (rename that table, or give the claim store another schema= or file)",
			routes.ErrBadInput, s.table, strings.Join(missing, ", "))
	}
	return nil
}

// tx runs f in one transaction, committed when f returns nil.
func (s *sqlStore) tx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("claims: begin: %w", err)
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("claims: commit: %w", err)
	}
	return nil
}

func (s *sqlStore) Plan(ctx context.Context, task string, n int) (int, error) {
	if err := checkPlan(task, n); err != nil {
		return 0, err
	}
	have := 0
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if s.dialect.planLock != "" {
			if _, err := tx.ExecContext(ctx, s.q(s.dialect.planLock), task); err != nil {
				return fmt.Errorf("claims: plan %s: lock: %w", task, err)
			}
		}
		var count, buckets sql.NullInt64
		if err := tx.QueryRowContext(ctx, s.q(`SELECT count(*), max(buckets) FROM {t} WHERE task = $1`), task).Scan(&count, &buckets); err != nil {
			return fmt.Errorf("claims: plan %s: %w", task, err)
		}
		if count.Int64 > 0 {
			have = int(buckets.Int64)
			return nil
		}
		_, err := tx.ExecContext(ctx, s.q(`WITH RECURSIVE b(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM b WHERE n + 1 < CAST($2 AS INTEGER))
INSERT INTO {t} (task, bucket, buckets) SELECT $1, n, CAST($2 AS INTEGER) FROM b`), task, n)
		if err != nil {
			return fmt.Errorf("claims: plan %s: %w", task, err)
		}
		have = n
		return nil
	})
	if err != nil {
		return 0, err
	}
	if have != n {
		return have, planMismatch(task, have, n)
	}
	return have, nil
}

func (s *sqlStore) Claim(ctx context.Context, task, owner string, ttl time.Duration) (Claim, error) {
	if owner == "" {
		return Claim{}, errors.New("claims: empty owner")
	}
	c := Claim{Task: task, Owner: owner}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var expires int64
		err := tx.QueryRowContext(ctx, s.q(`UPDATE {t} SET owner = $2, token = token + 1, expires_ms = {now} + CAST($3 AS BIGINT)
WHERE task = $1 AND bucket = (SELECT bucket FROM {t} WHERE task = $1 AND NOT done AND (owner IS NULL OR expires_ms <= {now})
	ORDER BY bucket LIMIT 1 `+s.dialect.skipLocked+`)
RETURNING bucket, buckets, token, expires_ms`), task, owner, ttl.Milliseconds()).Scan(&c.Bucket, &c.Buckets, &c.Token, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			var n int
			if err := tx.QueryRowContext(ctx, s.q(`SELECT count(*) FROM {t} WHERE task = $1`), task).Scan(&n); err != nil {
				return fmt.Errorf("claims: claim %s: %w", task, err)
			}
			if n == 0 {
				return fmt.Errorf("claims: task %s: %w", task, ErrNotPlanned)
			}
			return ErrNoneFree
		}
		if err != nil {
			return fmt.Errorf("claims: claim %s: %w", task, err)
		}
		c.Expires = time.UnixMilli(expires)
		return nil
	})
	if err != nil {
		return Claim{}, err
	}
	return c, nil
}

func (s *sqlStore) Renew(ctx context.Context, c Claim, ttl time.Duration) (Claim, error) {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var expires int64
		err := tx.QueryRowContext(ctx, s.q(`UPDATE {t} SET expires_ms = {now} + CAST($5 AS BIGINT)
WHERE task = $1 AND bucket = $2 AND owner = $3 AND token = $4 AND NOT done RETURNING expires_ms`),
			c.Task, c.Bucket, c.Owner, c.Token, ttl.Milliseconds()).Scan(&expires)
		if errors.Is(err, sql.ErrNoRows) {
			return lost(c)
		}
		if err != nil {
			return fmt.Errorf("claims: renew %s bucket %d: %w", c.Task, c.Bucket, err)
		}
		c.Expires = time.UnixMilli(expires)
		return nil
	})
	return c, err
}

func (s *sqlStore) Complete(ctx context.Context, c Claim) error {
	return s.end(ctx, c, "complete", `done = TRUE, expires_ms = NULL`)
}

func (s *sqlStore) Release(ctx context.Context, c Claim) error {
	return s.end(ctx, c, "release", `owner = NULL, expires_ms = NULL`)
}

// end applies set to c's bucket if c is still its current claim.
func (s *sqlStore) end(ctx context.Context, c Claim, verb, set string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE {t} SET `+set+`
WHERE task = $1 AND bucket = $2 AND owner = $3 AND token = $4 AND NOT done`), c.Task, c.Bucket, c.Owner, c.Token)
		if err != nil {
			return fmt.Errorf("claims: %s %s bucket %d: %w", verb, c.Task, c.Bucket, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return lost(c)
		}
		return nil
	})
}

func lost(c Claim) error {
	return fmt.Errorf("claims: %s bucket %d (token %d, %s): %w", c.Task, c.Bucket, c.Token, c.Owner, ErrLost)
}

func (s *sqlStore) List(ctx context.Context, task string) ([]Claim, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT bucket, buckets, owner, token, expires_ms, done FROM {t} WHERE task = $1 ORDER BY bucket`), task)
	if err != nil {
		return nil, fmt.Errorf("claims: list %s: %w", task, err)
	}
	defer rows.Close()
	var out []Claim
	for rows.Next() {
		c := Claim{Task: task}
		var owner sql.NullString
		var expires sql.NullInt64
		if err := rows.Scan(&c.Bucket, &c.Buckets, &owner, &c.Token, &expires, &c.Done); err != nil {
			return nil, fmt.Errorf("claims: list %s: %w", task, err)
		}
		c.Owner = owner.String
		if expires.Valid {
			c.Expires = time.UnixMilli(expires.Int64)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("claims: list %s: %w", task, err)
	}
	return out, nil
}

func (s *sqlStore) Forget(ctx context.Context, task string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM {t} WHERE task = $1`), task); err != nil {
			return fmt.Errorf("claims: forget %s: %w", task, err)
		}
		return nil
	})
}

func (s *sqlStore) Close() error { return s.db.Close() }
