package main

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/idgen"
)

// keyColumnTimeout bounds reading one key column's type.
const keyColumnTimeout = 5 * time.Second

// keyColumn (check --connect) reads the key column's type from the
// table's first data node and says whether the generator's keys fit it,
// as the proxy checks at DDL time. A misfit counts as a range error:
// check exits 1.
func (c *checker) keyColumn(t *config.TableRule) {
	kg, ok := c.rules.KeyGenerators[t.KeyGenerator]
	if !ok || len(t.DataNodes) == 0 {
		return
	}
	typ, ok := idgen.LookupType(kg.Type)
	if !ok {
		return
	}
	dn := t.DataNodes[0]
	colType, err := c.columnType(dn, t.KeyColumn)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		c.printf("  key column type: %s has no column %s yet (not created?)\n", dn, t.KeyColumn)
		return
	case err != nil:
		c.warnf("cannot read the type of %s.%s: %v", dn, t.KeyColumn, err)
		return
	}
	warn, err := typ.Range(kg.Props).CheckColumn(colType)
	switch {
	case err != nil:
		c.rangeErrors++
		c.printf("  range error: key column %s (%s on %s) cannot hold the keys of %s generator %s: %v\n", t.KeyColumn, colType, dn, kg.Type, kg.Name, err)
	case warn != "":
		c.warnf("key column %s (%s on %s): %s", t.KeyColumn, colType, dn, warn)
	default:
		c.printf("  key column type: %s on %s fits the keys of %s generator %s\n", colType, dn, kg.Type, kg.Name)
	}
}

// columnType reads COLUMN_TYPE of one column of a data node.
func (c *checker) columnType(dn config.DataNode, column string) (string, error) {
	var ds *config.DataSource
	for i := range c.rules.DataSources {
		if c.rules.DataSources[i].Name == dn.DataSource {
			ds = &c.rules.DataSources[i]
		}
	}
	if ds == nil {
		return "", errors.New("data source " + dn.DataSource + " is not in dataSources")
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = ds.User, ds.Password
	cfg.Net, cfg.Addr, cfg.DBName = "tcp", net.JoinHostPort(ds.Host, strconv.Itoa(ds.Port)), ds.Database
	cfg.Timeout = keyColumnTimeout
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return "", err
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), keyColumnTimeout)
	defer cancel()
	var colType string
	err = db.QueryRowContext(ctx, "SELECT COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ?",
		ds.Database, dn.Table, column).Scan(&colType)
	return colType, err
}
