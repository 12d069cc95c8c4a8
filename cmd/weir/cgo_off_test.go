//go:build !cgo

package main

// withEngine: a build without cgo has no DuckDB (duck's stub).
const withEngine = false
