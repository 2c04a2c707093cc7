package config

import (
	"fmt"
	"strings"
)

// DataNode names one physical table on one data source.
type DataNode struct {
	DataSource string `json:"dataSource"`
	Table      string `json:"table"`
}

// String returns the ds.table form used in rules files and explain output.
func (n DataNode) String() string { return n.DataSource + "." + n.Table }

// MarshalText writes the ds.table form, so plans print compactly.
func (n DataNode) MarshalText() ([]byte, error) { return []byte(n.String()), nil }

// UnmarshalText reads the ds.table form.
func (n *DataNode) UnmarshalText(b []byte) error {
	ds, table, ok := strings.Cut(string(b), ".")
	if !ok || ds == "" || table == "" {
		return fmt.Errorf("data node %q: want ds.table", b)
	}
	n.DataSource, n.Table = ds, table
	return nil
}
