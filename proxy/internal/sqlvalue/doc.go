// Package sqlvalue compares and computes MariaDB values the way the server
// does, for the proxy's result merge.
//
// Rows reach the merge in the text protocol's form (every value as the
// bytes MariaDB prints, nil for NULL) together with the result's column
// definitions. A Type, derived from one column definition, orders and
// hashes that column's values with the server's rules: integers signed and
// unsigned, DECIMAL exactly, floating point, temporal values, strings by
// collation (PAD SPACE or NO PAD), binary strings by bytes, MariaDB's
// INET4, INET6 and UUID by their binary form (the type named by the
// definition's extended metadata, fixedbin.go), NULL first.
// Decimal sums and averages are exact, with MariaDB's rounding, and
// FormatDouble prints a DOUBLE as the server prints it.
//
// The collation weight tables in weights/ are generated from a real MariaDB
// server by gen_weights.go (go generate) and checked against one by the
// tests. Everything here is immutable after construction and safe for
// concurrent use; the tables are decoded on first use.
package sqlvalue

//go:generate go run gen_weights.go
