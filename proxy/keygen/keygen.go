package keygen

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/idgen"
)

// keygenBuild is what building one key generator needs.
type keygenBuild struct {
	ctx   context.Context
	name  string
	cfg   config.KeyGeneratorConfig
	rules *config.Rules
}

// keygenBuilder builds one type of key generator; close releases what it
// holds (leases, connections).
type keygenBuilder func(b keygenBuild) (gen idgen.KeyGenerator, close func() error, err error)

// keygenBuilders is the registry of key generator types: one entry per
// idgen.Types name, each built in its own file.
func keygenBuilders() map[string]keygenBuilder {
	return map[string]keygenBuilder{
		idgen.TypeSnowflake: buildSnowflake,
		idgen.TypeUUID:      buildUUIDv4,
		idgen.TypeUUIDv7:    buildUUIDv7,
		idgen.TypeSegment:   buildSegment,
		idgen.TypeTicket:    buildTicket,
	}
}

// Open builds the rules file's key generators, keyed by name as
// router.New wants them. close stops them (etcd leases, high-water marks,
// ticket and segment connections) and must be called on shutdown.
func Open(ctx context.Context, rules *config.Rules) (gens map[string]idgen.KeyGenerator, close func() error, err error) {
	gens = map[string]idgen.KeyGenerator{}
	var closers []func() error
	close = func() error {
		var errs []error
		for _, c := range closers {
			errs = append(errs, c())
		}
		return errors.Join(errs...)
	}
	builders := keygenBuilders()
	for name, kg := range rules.KeyGenerators {
		t, ok := idgen.LookupType(kg.Type)
		build := builders[t.Name]
		if !ok || build == nil {
			close()
			return nil, nil, fmt.Errorf("key generator %s: type %s is not supported (%s are)", name, kg.Type, strings.Join(idgen.TypeNames(), ", "))
		}
		g, c, err := build(keygenBuild{ctx: ctx, name: name, cfg: kg, rules: rules})
		if err != nil {
			close()
			return nil, nil, fmt.Errorf("key generator %s: %w", name, err)
		}
		if c != nil {
			closers = append(closers, c)
		}
		gens[name] = g
	}
	return gens, close, nil
}

func buildSnowflake(b keygenBuild) (idgen.KeyGenerator, func() error, error) {
	cfg, err := idgen.ParseProps(b.cfg.Props)
	if err != nil {
		return nil, nil, err
	}
	g, err := idgen.New(b.ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return g, g.Close, nil
}

func buildUUIDv4(b keygenBuild) (idgen.KeyGenerator, func() error, error) {
	g, err := idgen.NewUUIDv4(b.cfg.Props)
	return g, nil, err
}

func buildUUIDv7(b keygenBuild) (idgen.KeyGenerator, func() error, error) {
	g, err := idgen.NewUUIDv7(b.cfg.Props)
	return g, nil, err
}

// openStore opens a database/sql handle on a key generator's own data
// source (a segment table's or a ticket server's), named by URL with the
// generator's username and password.
func openStore(raw string, st idgen.StoreConfig, conns int, multi bool) (*sql.DB, string, error) {
	ds, err := config.ParseDataSourceURL(raw)
	if err != nil {
		return nil, "", err
	}
	if st.Username != "" {
		ds.User = st.Username
	}
	if st.Password != "" {
		ds.Password = st.Password
	}
	return OpenDataSource(ds, DBOptions{Timeout: st.FetchTimeout, Conns: conns, MultiStatements: multi})
}

// DBOptions are the settings of OpenDataSource's handle.
type DBOptions struct {
	Timeout         time.Duration // dial, read and write
	Conns           int           // connections open (and idle) at most
	MultiStatements bool
}

// OpenDataSource opens a database/sql handle on one data source (the XA
// recovery uses it too). Its connections are secured as the data source's
// TLS settings say, as the pools' are: under sslMode PREFERRED a server
// without TLS is reached in plain text.
func OpenDataSource(ds config.DataSource, o DBOptions) (*sql.DB, string, error) {
	tlsConfig, err := ds.TLSConfig()
	if err != nil {
		return nil, "", err
	}
	c := mysql.NewConfig()
	c.User, c.Passwd = ds.User, ds.Password
	c.Net, c.Addr = "tcp", net.JoinHostPort(ds.Host, strconv.Itoa(ds.Port))
	c.DBName = ds.Database
	c.Timeout, c.ReadTimeout, c.WriteTimeout = o.Timeout, o.Timeout, o.Timeout
	c.MultiStatements = o.MultiStatements
	if tlsConfig != nil {
		c.TLS = tlsConfig
		c.AllowFallbackToPlaintext = ds.TLS.Mode == config.TLSPreferred
	}
	connector, err := mysql.NewConnector(c)
	if err != nil {
		return nil, "", err
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(o.Conns)
	db.SetMaxIdleConns(o.Conns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	return db, c.Addr + "/" + ds.Database, nil
}

// Tables lists the tables whose keyGenerateStrategy names generator.
func Tables(rules *config.Rules, generator string) []*config.TableRule {
	var out []*config.TableRule
	for _, name := range slices.Sorted(maps.Keys(rules.Tables)) {
		if t := rules.Tables[name]; t.KeyGenerator == generator && t.KeyColumn != "" {
			out = append(out, t)
		}
	}
	return out
}

// TableMax returns MAX(key column) over every physical table of tables,
// 0 when all are empty. A physical table that does not exist yet counts as
// empty.
func TableMax(ctx context.Context, rules *config.Rules, tables []*config.TableRule) (int64, error) {
	return largestKey(ctx, rules, tables, func(col, table string) string {
		return "SELECT MAX(" + col + ") FROM " + table
	})
}

// ClassMax returns the largest key at or above from with key % inc =
// off % inc over every physical table of tables, 0 when there is none:
// what a TICKET server's first tickets must stay clear of. The index on
// the key is read downwards from its top and stops at the first key of
// the class, so it reads only the keys above from that belong to other
// classes.
func ClassMax(ctx context.Context, rules *config.Rules, tables []*config.TableRule, from, inc, off int64) (int64, error) {
	return largestKey(ctx, rules, tables, func(col, table string) string {
		return fmt.Sprintf("SELECT %s FROM %s WHERE %s >= %d AND MOD(%s, %d) = %d ORDER BY %s DESC LIMIT 1",
			col, table, col, from, col, inc, off%inc, col)
	})
}

// largestKey runs query (of the quoted key column and physical table) on
// every physical table of tables and returns the largest value it
// answered, 0 for no row, NULL or a table that does not exist yet.
func largestKey(ctx context.Context, rules *config.Rules, tables []*config.TableRule, query func(col, table string) string) (int64, error) {
	dbs := map[string]*sql.DB{}
	defer func() {
		for _, db := range dbs {
			db.Close()
		}
	}()
	var best int64
	for _, t := range tables {
		for _, dn := range t.DataNodes {
			db := dbs[dn.DataSource]
			if db == nil {
				ds := dataSourceByName(rules, dn.DataSource)
				if ds == nil {
					return 0, fmt.Errorf("data source %s of %s is not in dataSources", dn.DataSource, t.Name)
				}
				var err error
				if db, _, err = OpenDataSource(*ds, DBOptions{Timeout: 5 * time.Second, Conns: 2}); err != nil {
					return 0, err
				}
				dbs[dn.DataSource] = db
			}
			var v sql.NullInt64
			err := db.QueryRowContext(ctx, query(quoteName(t.KeyColumn), quoteName(dn.Table))).Scan(&v)
			var me *mysql.MySQLError
			if errors.As(err, &me) && me.Number == 1146 || errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return 0, fmt.Errorf("the largest %s of %s: %w", t.KeyColumn, dn, err)
			}
			if v.Valid && v.Int64 > best {
				best = v.Int64
			}
		}
	}
	return best, nil
}

func dataSourceByName(rules *config.Rules, name string) *config.DataSource {
	for i := range rules.DataSources {
		if rules.DataSources[i].Name == name {
			return &rules.DataSources[i]
		}
	}
	return nil
}

// tableGuard is the idgen.Guard of a generator: MAX(key) over the tables
// it fills, nil when no table uses it.
func tableGuard(rules *config.Rules, generator string) idgen.Guard {
	tables := Tables(rules, generator)
	if len(tables) == 0 {
		return nil
	}
	return func(ctx context.Context) (int64, error) { return TableMax(ctx, rules, tables) }
}

// ticketGuard is the idgen.TicketGuard of a TICKET generator: the
// largest key of a server's class over the tables it fills, nil when no
// table uses it.
func ticketGuard(rules *config.Rules, generator string) idgen.TicketGuard {
	tables := Tables(rules, generator)
	if len(tables) == 0 {
		return nil
	}
	return func(ctx context.Context, from, inc, off int64) (int64, error) {
		return ClassMax(ctx, rules, tables, from, inc, off)
	}
}

// quoteName quotes a table or column name for SQL.
func quoteName(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}
