package config

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// dataSourceKeys are the keys a data source may carry: ShardingSphere-Proxy's
// names, their HikariCP spellings, and keys of JDBC-flavoured files that
// have no meaning for shardflake (accepted and ignored).
func dataSourceKeys() []string {
	return []string{
		"url", "jdbcUrl", "username", "password",
		"connectionTimeoutMilliseconds", "idleTimeoutMilliseconds", "maxLifetimeMilliseconds",
		"maxPoolSize", "minPoolSize",
		"connectionTimeout", "idleTimeout", "maxLifetime", "maximumPoolSize", "minimumIdle",
		"readOnly", "dataSourceClassName", "driverClassName", "customPoolProps", "tls",
	}
}

func (d *decoder) dataSources(r *Rules, n *yaml.Node, key *yaml.Node) {
	f := d.fields(n, "dataSources")
	if f == nil || len(f.order) == 0 {
		d.errorf(key, "dataSources is required: at least one MySQL data source")
		return
	}
	r.dsByName = map[string]*DataSource{}
	for _, name := range f.order {
		what := "data source " + name
		ds := DataSource{Name: name}
		g := d.fields(f.vals[name], what, dataSourceKeys()...)
		if g == nil {
			continue
		}
		urlKey := "url"
		if g.has("jdbcUrl") {
			urlKey = "jdbcUrl"
			if g.has("url") {
				d.errorf(g.keyNode("jdbcUrl"), "%s: set url or jdbcUrl, not both", what)
			}
		}
		raw := d.str(g.get(urlKey), what+" "+urlKey)
		if raw == "" {
			d.errorf(g.keyNode(urlKey), "%s: url is required, e.g. jdbc:mysql://127.0.0.1:3306/%s", what, name)
		} else if err := parseDataSourceURL(&ds, raw); err != nil {
			d.errorf(g.get(urlKey), "%s: %v", what, err)
		}
		if user := d.str(g.get("username"), what+" username"); user != "" {
			if ds.User != "" && ds.User != user {
				d.errorf(g.keyNode("username"), "%s: username %q differs from the user %q in url", what, user, ds.User)
			}
			ds.User = user
		}
		if pw := d.str(g.get("password"), what+" password"); pw != "" {
			if ds.Password != "" && ds.Password != pw {
				d.errorf(g.keyNode("password"), "%s: password differs from the password in url", what)
			}
			ds.Password = pw
		}
		d.dataSourceTLS(&ds, g, what)
		ds.MaxPoolSize = int(d.poolInt(g, what, "maxPoolSize", "maximumPoolSize"))
		ds.MinPoolSize = int(d.poolInt(g, what, "minPoolSize", "minimumIdle"))
		ds.ConnectionTimeout = time.Duration(d.poolInt(g, what, "connectionTimeoutMilliseconds", "connectionTimeout")) * time.Millisecond
		ds.IdleTimeout = time.Duration(d.poolInt(g, what, "idleTimeoutMilliseconds", "idleTimeout")) * time.Millisecond
		ds.MaxLifetime = time.Duration(d.poolInt(g, what, "maxLifetimeMilliseconds", "maxLifetime")) * time.Millisecond
		if ds.MaxPoolSize > 0 && ds.MinPoolSize > ds.MaxPoolSize {
			d.errorf(g.keyNode("minPoolSize"), "%s: minPoolSize %d is above maxPoolSize %d", what, ds.MinPoolSize, ds.MaxPoolSize)
		}
		if d.boolean(g.get("readOnly"), what+" readOnly", false) {
			d.warnf(g.keyNode("readOnly"), "%s: readOnly is ignored; shardflake writes to every data source", what)
		}
		if g.has("customPoolProps") {
			d.fields(g.get("customPoolProps"), what+" customPoolProps")
			d.warnf(g.keyNode("customPoolProps"), "%s: customPoolProps are ignored", what)
		}
		r.DataSources = append(r.DataSources, ds)
	}
	for i := range r.DataSources {
		r.dsByName[r.DataSources[i].Name] = &r.DataSources[i]
	}
}

// poolInt reads a non-negative pool setting under ShardingSphere's key or
// its HikariCP spelling; 0 when absent (the proxy's default).
func (d *decoder) poolInt(g *fieldSet, what, key, alias string) int64 {
	k := key
	if g.has(alias) {
		if g.has(key) {
			d.errorf(g.keyNode(alias), "%s: set %s or %s, not both", what, key, alias)
		}
		k = alias
	}
	v := d.integer(g.get(k), what+" "+k, 0)
	if v < 0 {
		d.errorf(g.get(k), "%s: %s cannot be negative", what, k)
		return 0
	}
	return v
}

// parseDataSourceURL fills in host, port, database, user, password and
// params from jdbc:mysql://host:port/db?params (also jdbc:mariadb://) or
// mysql://user:pass@host:port/db?params. The port defaults to 3306.
func parseDataSourceURL(ds *DataSource, raw string) error {
	s := strings.TrimSpace(raw)
	switch {
	case strings.HasPrefix(s, "jdbc:mysql://"), strings.HasPrefix(s, "jdbc:mariadb://"):
		s = "mysql://" + s[strings.Index(s, "://")+3:]
	case strings.HasPrefix(s, "mysql://"):
	case strings.HasPrefix(s, "jdbc:"):
		return fmt.Errorf("url %q is not a MySQL URL; shardflake speaks MySQL only", raw)
	default:
		return fmt.Errorf("url %q: want jdbc:mysql://host:port/db or mysql://user:pass@host:port/db", raw)
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("url %q: %v", raw, err)
	}
	if strings.Contains(u.Host, ",") {
		return fmt.Errorf("url %q names several hosts; give each its own data source", raw)
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return fmt.Errorf("url %q has no host", raw)
	}
	ds.Host = host
	ds.Port = 3306
	if port != "" {
		p, err := strconv.Atoi(port)
		if err != nil || p <= 0 || p > 65535 {
			return fmt.Errorf("url %q: bad port %q", raw, port)
		}
		ds.Port = p
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" || strings.Contains(db, "/") {
		return fmt.Errorf("url %q must name one database, e.g. mysql://%s/ds_0", raw, net.JoinHostPort(host, strconv.Itoa(ds.Port)))
	}
	ds.Database = db
	if u.User != nil {
		ds.User = u.User.Username()
		if p, ok := u.User.Password(); ok {
			ds.Password = p
		}
	}
	if len(u.Query()) > 0 {
		ds.Params = map[string]string{}
		for k, v := range u.Query() {
			ds.Params[k] = v[len(v)-1]
		}
	}
	return nil
}

// Addr returns host:port for dialing.
func (ds *DataSource) Addr() string { return net.JoinHostPort(ds.Host, strconv.Itoa(ds.Port)) }

// ParseDataSourceURL reads a data source URL as dataSources' url does
// (jdbc:mysql://host:port/db?params or mysql://user:pass@host:port/db), for
// the key generators that keep their state in a database of their own.
// Its TLS settings come from the URL's parameters (sslMode, useSSL,
// serverSslCert, ...), as a data source's do.
func ParseDataSourceURL(raw string) (DataSource, error) {
	var ds DataSource
	if err := parseDataSourceURL(&ds, raw); err != nil {
		return ds, err
	}
	t, _, unknown := urlTLS(ds.Params)
	switch {
	case unknown != "":
		return ds, fmt.Errorf("url sslMode=%s: want DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY", unknown)
	case t.SkipVerify && t.Mode >= TLSVerifyCA:
		return ds, fmt.Errorf("url sslMode=%s verifies the server's certificate; verifyServerCertificate=false contradicts it", t.Mode)
	}
	ds.TLS = t
	return ds, nil
}
