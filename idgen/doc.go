// Package idgen issues Snowflake keys for INSERTs that lack one.
//
// It sits at the bottom of the pipeline (cmd → proxy → router → idgen): the
// router asks a KeyGenerator for a block of consecutive keys before it routes
// an INSERT, so a generated key can be the sharding column. Generators are safe
// for concurrent use by any number of goroutines.
package idgen
