//go:build cgo

package main

// withEngine: a cgo build links DuckDB (runner/duck), whatever the tags.
const withEngine = true
