// Package loadfile reads the file of a LOAD DATA statement as MariaDB
// reads it, and writes records back in one canonical form.
//
// The proxy loads a LOCAL INFILE into a sharded table by splitting the
// client's file into records, routing each record by its sharding values
// and sending every data node its records in a LOAD DATA stream of its
// own. The data node then converts the values, fills defaults and raises
// the warnings exactly as it would for the client's file, provided it
// reads the same fields: so Reader follows MariaDB's READ_INFO field by
// field (FIELDS TERMINATED BY, [OPTIONALLY] ENCLOSED BY, ESCAPED BY, LINES
// STARTING BY and TERMINATED BY, \N and the NULL word, doubled
// enclosures, trailing fields left out, surplus fields), and AppendRecord
// writes a record so that MariaDB's default format (tab, no enclosure,
// backslash, newline) reads back the same fields, the same NULLs and the
// same surplus.
//
// A Reader belongs to one goroutine; the functions are pure.
package loadfile
