package proxy

import (
	"github.com/shardflake/shardflake/proxy/merge"
	"github.com/shardflake/shardflake/proxy/rows"
)

// The proxy's names for the row and merge seams, which live in their own
// packages (proxy/rows, proxy/merge) so that the merge is read and tested
// without the server. They are aliases: a Merger a caller configures is a
// merge.Merger.

// Row is one result row (rows.Row).
type Row = rows.Row

// RowStream is one result's rows (rows.Stream).
type RowStream = rows.Stream

// Merger combines the row streams of a multi-route SELECT (merge.Merger).
type Merger = merge.Merger

// MergeChecker refuses a plan before its routes run (merge.Checker).
type MergeChecker = merge.Checker

// ConcatMerger is the Merger that only concatenates (merge.Concat).
type ConcatMerger = merge.Concat

// closeAll closes every stream and returns the first error.
func closeAll(streams []RowStream) error { return rows.CloseAll(streams) }
