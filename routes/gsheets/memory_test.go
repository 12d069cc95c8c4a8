package gsheets_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
	gs "github.com/weirhq/weir/routes/gsheets/gsheetstest"
)

// A 200,000-row tab is read a page (10,000 rows) at a time: reading it
// grows the heap about as much as reading a 20,000-row tab does (a reader
// that held the tab would need ten times as much; the bound, three times,
// leaves room for the sampling), and by less than twice the tab's size as
// the API sends it (its decoded values alone would take more).
func TestGSheets_LargeTabBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("200,000 rows")
	}
	ctx := testContext(t)
	s := peer(t)
	wire := map[string]int{}
	for tab, n := range map[string]int{"Small": 20_000, "Big": 200_000} {
		wire[tab] = bigTab(s, tab, n)
	}
	small := peakGrowth(t, ctx, s, "Small", 20_000)
	big := peakGrowth(t, ctx, s, "Big", 200_000)
	t.Logf("20,000 rows (%d MB on the wire): the heap grew by %d MB; 200,000 rows (%d MB): by %d MB", wire["Small"]>>20, small>>20, wire["Big"]>>20, big>>20)
	if big > 3*small {
		t.Fatalf("reading 10x the rows grew the heap by %d MB, against %d MB: memory follows the tab's size", big>>20, small>>20)
	}
	if big > 2*int64(wire["Big"]) {
		t.Fatalf("reading a %d MB tab grew the heap by %d MB", wire["Big"]>>20, big>>20)
	}
}

// bigTab makes a tab of n rows and returns its size as values.get sends it.
func bigTab(s *gs.Server, tab string, n int) int {
	pad := strings.Repeat("padding ", 12)
	rows := [][]gs.Cell{texts("id", "name", "score", "ok", "note")}
	wire := 0
	for i := 1; i <= n; i++ {
		row := []gs.Cell{gs.Num(float64(i)), gs.Text(fmt.Sprintf("name %d %s", i, pad)), gs.Num(float64(i) / 4), gs.Bool(i%2 == 0), gs.Text("n")}
		rows = append(rows, row)
		if i == 1 {
			b, _ := json.Marshal([]any{row[0].V, row[1].V, row[2].V, row[3].V, row[4].V})
			wire = (len(b) + 1) * n
		}
	}
	s.SetTab(book, tab, rows)
	return wire
}

// peakGrowth reads a tab (typed, the default page) and returns how far
// the heap grew above what was live before.
func peakGrowth(t *testing.T, ctx context.Context, s *gs.Server, tab string, n int64) int64 {
	src, err := routes.OpenSource(ctx, sheetURL(s, "typed=1"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	info, err := src.Probe(ctx, routes.TableRef{Name: tab})
	if err != nil {
		t.Fatal(err)
	}
	// Measure what is live, not the garbage the pacer lets grow: the peer
	// holds the tabs, and 10% of that heap would be more than a page.
	defer debug.SetGCPercent(debug.SetGCPercent(1))
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
		}
	}()
	ranges, _ := src.Plan(ctx, info, routes.PlanOptions{Pipes: 1})
	st, err := src.Read(ctx, ranges[0], routes.ReadOptions{ChunkBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var got int64
	for st.Next() {
		got += st.RecordBatch().NumRows()
	}
	err = st.Err()
	st.Release()
	close(stop)
	wg.Wait()
	if err != nil || got != n {
		t.Fatalf("read %d rows of %d: %v", got, n, err)
	}
	return int64(peak.Load()) - int64(base.HeapInuse)
}
