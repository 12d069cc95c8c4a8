//go:build cgo

package main

// withEngine: a cgo build links DuckDB (duck), whatever the tags.
const withEngine = true
