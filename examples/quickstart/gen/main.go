// Command gen writes the quickstart's input files, deterministically (the
// same bytes on every run and machine):
//
//	go run ./examples/quickstart/gen            # from the repository root
//
// data/customers.csv: 400 customers in 8 countries.
// data/orders.csv: 8,000 orders over 2024; about 2% of them break the
// silver contract on purpose (an unknown status, a negative or absurd
// amount, a repeated order id) so the quickstart shows the quarantine.
//
// With -first ID it appends -orders N more orders, from order id ID, to
// data/orders.csv: a later batch for the bronze append to pick up
// (go run ./examples/quickstart/gen -first 8001 -orders 500; git checkout
// examples/quickstart/data puts the bundled files back).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"
)

var countries = []string{"FR", "DE", "US", "JP", "BR", "IN", "GB", "ES"}

var statuses = []string{"paid", "paid", "paid", "paid", "refunded", "pending", "Paid", "PENDING"}

func main() {
	out := flag.String("o", "examples/quickstart/data", "output folder")
	n := flag.Int("orders", 8000, "orders to write")
	first := flag.Int("first", 1, "first order id (above 1: write only orders.csv, to append a batch)")
	flag.Parse()
	if err := run(*out, *first, *n); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(dir string, first, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if first == 1 {
		for _, name := range []string{"customers.csv", "orders.csv"} {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
		if err := write(filepath.Join(dir, "customers.csv"), customers); err != nil {
			return err
		}
	}
	return write(filepath.Join(dir, "orders.csv"), func(w *bufio.Writer) { orders(w, first, n) })
}

// write creates path with fill's text, or appends to it when fill writes
// later orders (the header is written for order 1 only).
func write(path string, fill func(*bufio.Writer)) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fill(w)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func customers(w *bufio.Writer) {
	r := rand.New(rand.NewPCG(1, 2))
	fmt.Fprintln(w, "customer_id,name,country,signed_up")
	start := time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)
	for id := 1; id <= 400; id++ {
		day := start.AddDate(0, 0, r.IntN(700))
		fmt.Fprintf(w, "%d,customer %03d,%s,%s\n", id, id, countries[r.IntN(len(countries))], day.Format("2006-01-02"))
	}
}

func orders(w *bufio.Writer, first, n int) {
	r := rand.New(rand.NewPCG(3, uint64(first)))
	if first == 1 {
		fmt.Fprintln(w, "order_id,customer_id,amount,status,ordered_at")
	}
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for id := first; id < first+n; id++ {
		at := start.Add(time.Duration(id-1)*time.Hour + time.Duration(r.IntN(3600))*time.Second)
		amount := fmt.Sprintf("%d.%02d", 5+r.IntN(400), r.IntN(100))
		status := statuses[r.IntN(len(statuses))]
		oid := id
		switch r.IntN(200) {
		case 0:
			status = "lost" // not an accepted status
		case 1:
			amount = "-" + amount // negative
		case 2:
			amount = "250000.00" // above the range
		case 3:
			oid = id - 1 // a repeated order id
		}
		fmt.Fprintf(w, "%d,%d,%s,%s,%s\n", oid, 1+r.IntN(400), amount, status, at.Format("2006-01-02 15:04:05"))
	}
}
