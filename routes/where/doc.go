// Package where is weir's small filter language: comparisons between a
// column and a literal (=, !=, <>, <, <=, >, >=), IS [NOT] NULL, AND, OR,
// NOT and parentheses.
//
//	amount > 100 AND (status = 'paid' OR status IS NULL)
//
// Parse turns the text into an AST (Expr). Compile binds an Expr to an Arrow
// schema and Filter.Apply keeps the rows of a record batch for which it is
// true (SQL's three-valued logic: a NULL comparison is unknown, and unknown
// rows are dropped; NaN is above every number and equal to itself). SQL renders the
// part of an Expr a SQL source evaluates itself, by its own rules (collation,
// NaN order), and SQLResidual the rest, which the client applies: so weir
// read returns what the source's own SELECT … WHERE returns.
//
// Literals: integers, decimals (exact; 1e3 style too), 'strings' (a quote
// inside is doubled), TRUE and FALSE. A string literal compared with a timestamp or
// date column is parsed as one ('2024-01-31', '2024-01-31 12:00:00',
// RFC 3339 with a zone); compared with a numeric column it is parsed as a
// number. Column names are bare identifiers or "double quoted".
package where
