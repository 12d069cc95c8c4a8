// Package crosstest holds the tests that cross the MySQL route with the
// Postgres route (types round-tripping both ways, the conformance cells of
// both pairs). It has no code of its own: the routes never import each
// other, so the crossing lives apart from both.
package crosstest
