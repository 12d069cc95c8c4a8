//go:build !cgo

package main

// withEngine: a build without cgo has no DuckDB (runner/duck's stub).
const withEngine = false
