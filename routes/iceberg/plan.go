package iceberg

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"

	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/routes"
)

// rangeSpec is a Range's Predicate: which data files of which snapshot a
// pipe reads.
type rangeSpec struct {
	Snapshot int64    `json:"snapshot,omitempty"` // 0: the table has no snapshot
	Files    []string `json:"files,omitempty"`
	// Added marks an incremental read by routes.SnapshotCursor: the pipe reads the
	// files added in (After, Until] whose path hashes to its Index, at the
	// snapshot Until names (resolved by Read, which knows Until).
	Added bool `json:"added,omitempty"`
}

func (s rangeSpec) encode() string {
	b, _ := json.Marshal(s)
	return string(b)
}

func decodeRange(r routes.Range) (rangeSpec, error) {
	var s rangeSpec
	if err := json.Unmarshal([]byte(r.Predicate), &s); err != nil {
		return s, fmt.Errorf("range %q of %s is not an iceberg range: %w", r.Label, r.Table.Ref, err)
	}
	return s, nil
}

// Plan splits the pinned (or current) snapshot's data files into at most
// opts.Pipes groups of about equal bytes, one range each. An incremental
// read by routes.SnapshotCursor splits the added files by a hash of their path.
func (e *Endpoint) Plan(ctx context.Context, info *routes.TableInfo, opts routes.PlanOptions) ([]routes.Range, error) {
	pipes := max(opts.Pipes, 1)
	if opts.Cursor == routes.SnapshotCursor {
		return hashRanges(info, pipes), nil
	}
	base, snapID, err := e.pinned(info.Ref)
	if err != nil {
		return nil, err
	}
	tbl, err := e.loadTable(ctx, base)
	if err != nil {
		return nil, err
	}
	snap, err := snapshotAt(tbl, snapID)
	if err != nil || snap == nil {
		return []routes.Range{{Table: info, Count: 1, Predicate: rangeSpec{}.encode(), Label: "no snapshot"}}, err
	}
	scan, err := newScan(tbl, snap, info, 0, nil, nil, opts.Cursor, opts.After, "")
	if err != nil {
		return nil, err
	}
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan files of %s: %w", info.Ref, err)
	}
	return fileRanges(info, snap.SnapshotID, groupFiles(tasks, pipes)), nil
}

func hashRanges(info *routes.TableInfo, pipes int) []routes.Range {
	out := make([]routes.Range, pipes)
	for i := range out {
		out[i] = routes.Range{Table: info, Index: i, Count: pipes, Predicate: rangeSpec{Added: true}.encode(),
			Label: fmt.Sprintf("added files, part %d of %d", i+1, pipes)}
	}
	return out
}

func fileRanges(info *routes.TableInfo, snapID int64, groups [][]string) []routes.Range {
	out := make([]routes.Range, len(groups))
	for i, g := range groups {
		out[i] = routes.Range{Table: info, Index: i, Count: len(groups),
			Predicate: rangeSpec{Snapshot: snapID, Files: g}.encode(),
			Label:     fmt.Sprintf("snapshot %d, %d files (part %d of %d)", snapID, len(g), i+1, len(groups))}
	}
	return out
}

// groupFiles packs files into at most n groups of about equal bytes,
// largest first; there is always at least one (maybe empty) group.
func groupFiles(tasks []table.FileScanTask, n int) [][]string {
	sizes := map[string]int64{}
	for _, t := range tasks {
		sizes[t.File.FilePath()] = t.File.FileSizeBytes()
	}
	paths := make([]string, 0, len(sizes))
	for p := range sizes {
		paths = append(paths, p)
	}
	sort.Slice(paths, func(i, j int) bool { return sizes[paths[i]] > sizes[paths[j]] })
	groups := make([][]string, max(min(n, len(paths)), 1))
	load := make([]int64, len(groups))
	for _, p := range paths {
		k := 0
		for i := range load {
			if load[i] < load[k] {
				k = i
			}
		}
		groups[k] = append(groups[k], p)
		load[k] += sizes[p]
	}
	return groups
}

// inPart says whether a file belongs to part index of count.
func inPart(path string, index, count int) bool {
	h := fnv.New32a()
	h.Write([]byte(path))
	return int(h.Sum32()%uint32(count)) == index
}
