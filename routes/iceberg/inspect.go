package iceberg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/routes"
)

// Catalog returns the endpoint's Iceberg catalog, for tools and tests
// that need what weir does not wrap (expiring snapshots, compaction).
func (e *Endpoint) Catalog() catalog.Catalog { return e.cat }

// LoadTable loads an Iceberg table; a missing one is routes.ErrNotFound.
func (e *Endpoint) LoadTable(ctx context.Context, t routes.TableRef) (*table.Table, error) {
	return e.loadTable(ctx, t)
}

// LockHolder names the run holding a table's lease, if any.
func (e *Endpoint) LockHolder(ctx context.Context, t routes.TableRef) (string, bool, error) {
	if e.db == nil {
		tbl, err := e.loadTable(ctx, t)
		if err != nil {
			return "", false, err
		}
		v, held := readLease(tbl)
		return v.Run, held, nil
	}
	rl := e.lock.(*rowLock)
	var run string
	err := e.db.QueryRowContext(ctx, rl.q(`SELECT run_id FROM `+LockTable+` WHERE table_key = ?`), lockKey(t)).Scan(&run)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("lock holder of %s: %w", t, err)
	}
	return run, true, nil
}

// Orphans lists the files under a table's data folder that no snapshot
// references: what a killed run can leave behind (an aborted one removes
// its own). They are safe to delete while no weir run writes the table.
func (e *Endpoint) Orphans(ctx context.Context, t routes.TableRef) ([]string, error) {
	tbl, err := e.loadTable(ctx, t)
	if err != nil {
		return nil, err
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	lfs, ok := fsys.(icebergio.ListableIO)
	if !ok {
		return nil, fmt.Errorf("%w: listing files of %s", routes.ErrUnsupported, tbl.Location())
	}
	known, err := referenced(tbl, fsys)
	if err != nil {
		return nil, err
	}
	return unreferenced(lfs, strings.TrimSuffix(tbl.Location(), "/")+"/data", known)
}

// referenced is the base names of every file any snapshot lists.
func referenced(tbl *table.Table, fsys icebergio.IO) (map[string]bool, error) {
	known := map[string]bool{}
	for _, snap := range tbl.Metadata().Snapshots() {
		mans, err := snap.Manifests(fsys)
		if err != nil {
			return nil, fmt.Errorf("manifests of snapshot %d: %w", snap.SnapshotID, err)
		}
		for _, m := range mans {
			for entry, err := range m.Entries(fsys, false) {
				if err != nil {
					return nil, fmt.Errorf("manifest %s: %w", m.FilePath(), err)
				}
				known[baseName(entry.DataFile().FilePath())] = true
			}
		}
	}
	return known, nil
}

func unreferenced(lfs icebergio.ListableIO, root string, known map[string]bool) ([]string, error) {
	var out []string
	err := lfs.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !known[d.Name()] {
			out = append(out, path)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return out, err
}

func baseName(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }
