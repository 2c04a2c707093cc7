# A small ODBC application: pyodbc (Debian's python3-pyodbc) over MariaDB
# Connector/ODBC (odbc-mariadb, under unixODBC's driver manager), the way
# BI tools, spreadsheet clients and pyodbc programs reach MariaDB. Run by
# TestODBCApplication through the proxy over binding tables and directly on
# one MariaDB. It connects with a DSN-less connection string and pyodbc's
# defaults (autocommit off), asks what SQLGetInfo tells, creates the
# tables, calls the catalog functions tools call (SQLTables, SQLColumns,
# SQLPrimaryKeys, SQLStatistics, SQLGetTypeInfo), inserts without keys
# with ? parameters (one by one, executemany, and executemany with
# fast_executemany's parameter arrays) and reads the key back with
# LAST_INSERT_ID() (pyodbc 4.0 has no cursor.lastrowid), reads by key,
# ranges sorted and paged, aggregates, NULLs, DECIMAL, DATETIME, unicode
# text and BLOBs, commits and rolls back, and makes errors whose SQLSTATE
# and native code it prints, the connection usable after each. It prints
# one line per step; both runs must print the same.
#
# Keys differ by nature (Snowflake keys through the proxy, AUTO_INCREMENT
# on MariaDB), so each row is printed under a label given in the order the
# rows were made: both kinds of key grow in that order. The database's
# name, the user's and the server's version differ by nature too, and are
# printed as DB, USER and VERSION.
#
# Usage: python3 odbc_app.py driver host port user password database
import datetime
import decimal
import re
import sys

import pyodbc

driver, host, port, user, password, database = sys.argv[1:7]
conn_str = "DRIVER={%s};SERVER=%s;PORT=%s;DATABASE=%s;UID=%s;PWD=%s" % (driver, host, port, database, user, password)
labels = {}


def out(*values):
    print(repr(values))


def learn(cur, table, key, prefix):
    """learn labels the keys of table's rows it has not seen, in key order."""
    for (k,) in cur.execute("SELECT %s FROM %s ORDER BY %s" % (key, table, key)).fetchall():
        if (prefix, k) not in labels:
            labels[(prefix, k)] = "%s%d" % (prefix, sum(1 for p, _ in labels if p == prefix) + 1)


def label(k, prefix="o"):
    return None if k is None else labels.get((prefix, k), "?%s" % k)


def plain(s):
    """plain takes what differs by nature out of a text: the database's
    and the user's names, the server's version and keys (as labels)."""
    if not isinstance(s, str):
        return s
    s = s.replace(database, "DB")
    s = re.sub(r"\b%s\b" % re.escape(user), "USER", s)
    s = re.sub(r"\d+\.\d+\.\d+-MariaDB[\w.+~-]*", "VERSION", s)
    return re.sub(r"'(\d+)(['-])", lambda m: "'%s%s" % (label(int(m.group(1))), m.group(2)), s)


def error(e):
    """error is what an application reads of a pyodbc error: its class,
    its SQLSTATE and the native error code in its message."""
    state = e.args[0] if e.args else None
    msg = e.args[1] if len(e.args) > 1 else ""
    native = re.search(r"\((-?\d+)\) \(SQL\w+\)$", msg)
    return (type(e).__name__, state, int(native.group(1)) if native else None, plain(re.sub(r"\s*\(-?\d+\) \(SQL\w+\)$", "", msg)))


def failed(name, body):
    try:
        out(name, "ok", body())
    except pyodbc.Error as e:
        out(name, "error", *error(e))


conn = pyodbc.connect(conn_str)
cur = conn.cursor()

# What SQLGetInfo tells (the version under the proxy carries its suffix).
info = {}
for name in ("SQL_DBMS_NAME", "SQL_DBMS_VER", "SQL_DRIVER_NAME", "SQL_DRIVER_ODBC_VER", "SQL_DATABASE_NAME",
             "SQL_USER_NAME", "SQL_SERVER_NAME", "SQL_IDENTIFIER_QUOTE_CHAR", "SQL_CATALOG_TERM", "SQL_CATALOG_NAME_SEPARATOR",
             "SQL_TXN_CAPABLE", "SQL_DEFAULT_TXN_ISOLATION", "SQL_MAX_COLUMN_NAME_LEN", "SQL_MAX_TABLE_NAME_LEN",
             "SQL_IDENTIFIER_CASE", "SQL_DATA_SOURCE_READ_ONLY", "SQL_MULT_RESULT_SETS", "SQL_MULTIPLE_ACTIVE_TXN",
             "SQL_SEARCH_PATTERN_ESCAPE", "SQL_ACCESSIBLE_TABLES"):
    info[name] = conn.getinfo(getattr(pyodbc, name))
info["SQL_DBMS_VER"] = info["SQL_DBMS_VER"].replace("-shardflake", "")
info["SQL_SERVER_NAME"] = "HOST" if info["SQL_SERVER_NAME"].startswith(host) else info["SQL_SERVER_NAME"]
out("getinfo", sorted((k, plain(v) if k != "SQL_DBMS_VER" else re.sub(r"^\d+\.\d+\.\d+", "N.N.N", v)) for k, v in info.items()))
out("autocommit", conn.autocommit, cur.execute("SELECT @@autocommit, @@in_transaction").fetchone()[0])
out("session", [plain(v) for v in cur.execute("SELECT DATABASE(), @@character_set_client, @@character_set_results, @@sql_auto_is_null").fetchone()])
# The driver asked the server to track the schema in use (SET
# session_track_schema = ON) and reads SQL_DATABASE_NAME from what the OK
# packets tell it.
cur.execute("USE information_schema")
used = conn.getinfo(pyodbc.SQL_DATABASE_NAME), cur.execute("SELECT DATABASE()").fetchval()
cur.execute("USE " + database)
out("use", used, plain(conn.getinfo(pyodbc.SQL_DATABASE_NAME)))

# The schema, created through the connection as a tool's migration does.
for q in (
    "DROP TABLE IF EXISTS t_order_item",
    "DROP TABLE IF EXISTS t_order",
    "CREATE TABLE t_order (order_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, user_id INT NOT NULL, "
    "status VARCHAR(16) NOT NULL, amount DECIMAL(10,2), note VARCHAR(64), created DATETIME, payload MEDIUMBLOB, "
    "due DATE, at_time TIME, urgent TINYINT(1), big BIGINT UNSIGNED, ratio DOUBLE, "
    "KEY idx_user (user_id)) DEFAULT CHARSET=utf8mb4",
    "CREATE TABLE t_order_item (item_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, order_id BIGINT NOT NULL, "
    "user_id INT NOT NULL, sku VARCHAR(20) NOT NULL, qty INT NOT NULL, UNIQUE KEY uk_sku (order_id, sku), "
    "CONSTRAINT fk_item_order FOREIGN KEY (order_id) REFERENCES t_order (order_id)) DEFAULT CHARSET=utf8mb4",
):
    cur.execute(q)
conn.commit()

# The catalog functions tools call to show tables and columns.
# Named with the current catalog, as a tool lists the database it shows:
# without one the driver lists every database's tables the account sees
# (on MariaDB the other tests' databases too, through the proxy the
# logical schema's).
out("tables", sorted((plain(r.table_cat), r.table_name, r.table_type) for r in cur.tables(table="t_order%", catalog=database)))
out("tables by type", sorted(r.table_name for r in cur.tables(catalog=database, tableType="TABLE") if r.table_name.startswith("t_order")))
out("columns", [(r.column_name, r.data_type, r.type_name, r.column_size, r.decimal_digits, r.nullable, r.ordinal_position)
                for r in cur.columns(table="t_order")])
out("column", [(r.column_name, r.type_name, r.is_nullable) for r in cur.columns(table="t_order_item", column="qty")])
out("primary keys", [(plain(r.table_cat), r.table_name, r.column_name, r.key_seq, r.pk_name) for r in cur.primaryKeys("t_order_item")])
for table in ("t_order", "t_order_item"):
    out("statistics", [(r.table_name, r.non_unique, r.index_name, r.ordinal_position, r.column_name)
                       for r in cur.statistics(table) if r.index_name is not None])
out("special columns", [(r.column_name, r.data_type, r.type_name) for r in cur.rowIdColumns("t_order")])
out("foreign keys", [(r.pktable_name, r.pkcolumn_name, r.fktable_name, r.fkcolumn_name, r.key_seq, r.fk_name)
                      for r in cur.foreignKeys(foreignTable="t_order_item")])
types = cur.getTypeInfo().fetchall()
out("type info", len(types), sorted({(r.type_name, r.data_type) for r in types if r.type_name in ("BIGINT", "DECIMAL", "VARCHAR", "DATETIME", "BLOB")}))
out("type info varchar", [(r.type_name, r.column_size, r.literal_prefix) for r in cur.getTypeInfo(pyodbc.SQL_VARCHAR)])

# Inserts without keys, ? parameters bound by the driver.
ids = []
ins = "INSERT INTO t_order (user_id, status, amount, note, created, payload) VALUES (?, ?, ?, ?, ?, ?)"
for i in range(12):
    cur.execute(ins, 1 + i % 4, "NEW", decimal.Decimal("%d.%02d" % (10 * i, i)), None if i % 3 == 0 else "n\u00e9-%d \u2603" % i,
                datetime.datetime(2024, 1, 1 + i, 10, 0, 0), bytes([i, 0, 255, 39, 92]) if i % 2 else None)
    n = cur.rowcount
    ids.append(cur.execute("SELECT LAST_INSERT_ID()").fetchval())
    if n != 1:
        raise SystemExit("%d rows" % n)
conn.commit()
learn(cur, "t_order", "order_id", "o")
out("insert ids", [label(k) for k in ids])
cur.execute("INSERT INTO t_order (user_id, status, amount) VALUES (?, ?, ?), (?, ?, ?)", 1, "MULTI", decimal.Decimal("1.50"), 2, "MULTI", 2.5)
multi = (cur.rowcount, cur.execute("SELECT LAST_INSERT_ID()").fetchval())
conn.commit()
learn(cur, "t_order", "order_id", "o")
out("multi-row", multi[0], label(multi[1]), cur.execute("SELECT status, amount FROM t_order WHERE order_id = ?", multi[1]).fetchone())

item = "INSERT INTO t_order_item (order_id, user_id, sku, qty) VALUES (?, ?, ?, ?)"
cur.executemany(item, [(ids[i % 12], 1 + (i % 12) % 4, "s%d" % i, i) for i in range(12)])
out("executemany", cur.rowcount)
cur.fast_executemany = True
cur.executemany(item, [(ids[i % 12], 1 + (i % 12) % 4, "s%d" % i, i) for i in range(12, 24)])
out("fast_executemany", cur.rowcount)
cur.fast_executemany = False
conn.commit()
learn(cur, "t_order_item", "item_id", "i")
out("counts", cur.execute("SELECT COUNT(*) FROM t_order").fetchval(), cur.execute("SELECT COUNT(*), SUM(qty) FROM t_order_item").fetchone())

# Reads: by key, by sharding column, ranges sorted and paged.
r = cur.execute("SELECT order_id, user_id, status, amount, note, created, payload FROM t_order WHERE order_id = ?", ids[5]).fetchone()
out("by key", label(r[0]), *r[1:])
out("description", [(d[0], d[1].__name__, d[4], d[5], d[6]) for d in cur.description])
out("missing", cur.execute("SELECT status FROM t_order WHERE order_id = ?", -1).fetchone())
out("by user", [(label(k), a, n) for k, a, n in cur.execute(
    "SELECT order_id, amount, note FROM t_order WHERE user_id = ? ORDER BY order_id", 2).fetchall()])
out("in range", [(label(k), a) for k, a in cur.execute(
    "SELECT order_id, amount FROM t_order WHERE user_id IN (?, ?) AND amount BETWEEN ? AND ? ORDER BY amount DESC", 1, 3, 20, 90).fetchall()])
out("dates", [label(k) for (k,) in cur.execute(
    "SELECT order_id FROM t_order WHERE created >= ? AND created < ? ORDER BY created", datetime.datetime(2024, 1, 3), datetime.date(2024, 1, 7)).fetchall()])
for page in range(3):
    rows = cur.execute("SELECT order_id, amount FROM t_order ORDER BY amount DESC, order_id LIMIT ? OFFSET ?", 5, 5 * page).fetchall()
    out("page", page, [(label(k), a) for k, a in rows])
out("nulls", cur.execute("SELECT COUNT(*), COUNT(note), COUNT(payload), SUM(note IS NULL) FROM t_order").fetchone(),
    [label(k) for (k,) in cur.execute("SELECT order_id FROM t_order WHERE note IS NULL AND user_id = ? ORDER BY order_id", 1).fetchall()])
out("unicode", [n for (n,) in cur.execute("SELECT note FROM t_order WHERE note LIKE ? ORDER BY note", "n\u00e9-1%").fetchall()],
    cur.execute("SELECT COUNT(*) FROM t_order WHERE note = ?", "n\u00e9-4 \u2603").fetchval())
out("blob", [(label(k), p) for k, p in cur.execute(
    "SELECT order_id, payload FROM t_order WHERE payload IS NOT NULL ORDER BY order_id LIMIT 3").fetchall()],
    cur.execute("SELECT COUNT(*) FROM t_order WHERE payload = ?", bytes([3, 0, 255, 39, 92])).fetchval())
# A value longer than pyodbc binds in place goes as data at execution
# (SQLPutData), which the driver sends in pieces (COM_STMT_SEND_LONG_DATA).
for size in (10240, 300000):
    blob = bytes(range(256)) * (size // 256)
    cur.execute("UPDATE t_order SET payload = ? WHERE order_id = ?", blob, ids[0])
    n = cur.rowcount
    conn.commit()
    out("long blob", size, n, cur.execute("SELECT payload FROM t_order WHERE order_id = ?", ids[0]).fetchval() == blob,
        cur.execute("SELECT LENGTH(payload), MD5(payload) FROM t_order WHERE order_id = ?", ids[0]).fetchone())
# Too long for the column, sent as data at execution too.
failed("long text", lambda: cur.execute("UPDATE t_order SET note = ? WHERE order_id = ?", "x" * 5000, ids[0]).rowcount)
conn.rollback()

# More types, as parameters and read back: DATE, TIME, a boolean,
# BIGINT UNSIGNED past the signed range (a Decimal: pyodbc binds no larger
# int), DOUBLE.
for k, args in ((ids[1], (datetime.date(2024, 2, 29), datetime.time(23, 59, 58), True, decimal.Decimal(2**63 + 5), -2.5)),
                (ids[2], (datetime.date(1999, 12, 31), datetime.time(0, 0, 1), False, 7, 1e-3))):
    cur.execute("UPDATE t_order SET due = ?, at_time = ?, urgent = ?, big = ?, ratio = ? WHERE order_id = ?", *args, k)
conn.commit()
out("types", [(label(r[0]),) + tuple(r[1:]) for r in cur.execute(
    "SELECT order_id, due, at_time, urgent, big, ratio FROM t_order WHERE due IS NOT NULL ORDER BY due").fetchall()],
    [(d[0], d[1].__name__) for d in cur.description])
out("types where", [label(k) for (k,) in cur.execute(
    "SELECT order_id FROM t_order WHERE big > ? AND urgent = ? AND due BETWEEN ? AND ?", decimal.Decimal(2**63), True,
    datetime.date(2024, 1, 1), datetime.date(2024, 12, 31)).fetchall()])

# ODBC escape sequences, which report writers and query builders send:
# date and timestamp literals, scalar functions, an outer join.
out("escapes", tuple(cur.execute("SELECT {d '2024-01-02'}, {ts '2024-01-02 03:04:05'}, {fn UCASE('abc')}, {fn CONCAT('a', 'b')}").fetchone()))
out("escape where", [label(k) for (k,) in cur.execute(
    "SELECT order_id FROM t_order WHERE created >= {ts '2024-01-10 00:00:00'} AND {fn LCASE(status)} = ? ORDER BY order_id", "new").fetchall()])
out("outer join escape", [(label(k), n) for k, n in cur.execute(
    "SELECT o.order_id, COUNT(i.item_id) FROM {oj t_order o LEFT OUTER JOIN t_order_item i ON i.order_id = o.order_id AND i.user_id = o.user_id} "
    "WHERE o.user_id = ? GROUP BY o.order_id ORDER BY o.order_id", 4).fetchall()])

# Aggregates over every data node.
out("group by", [tuple(r) for r in cur.execute(
    "SELECT user_id, COUNT(*), SUM(amount), AVG(amount), MIN(created), MAX(amount) FROM t_order WHERE status = ? "
    "GROUP BY user_id ORDER BY user_id", "NEW").fetchall()])
out("having", [tuple(r) for r in cur.execute(
    "SELECT user_id, SUM(amount) AS total FROM t_order GROUP BY user_id HAVING SUM(amount) > ? ORDER BY total DESC", 100).fetchall()])
out("scalar", tuple(cur.execute("SELECT COUNT(*), SUM(amount), MIN(amount), MAX(created) FROM t_order").fetchone()))
out("join", [tuple(r) for r in cur.execute(
    "SELECT i.sku, o.status, i.qty FROM t_order_item i JOIN t_order o ON i.order_id = o.order_id AND i.user_id = o.user_id "
    "WHERE i.user_id = ? ORDER BY i.item_id", 3).fetchall()])

# Updates and deletes with their row counts.
cur.execute("UPDATE t_order SET status = ?, amount = amount + ? WHERE order_id = ?", "PAID", 1, ids[1])
n = cur.rowcount
cur.execute("UPDATE t_order SET status = ? WHERE order_id = ?", "PAID", -1)
out("update", n, cur.rowcount)
cur.execute("DELETE FROM t_order_item WHERE order_id = ?", ids[11])
n = cur.rowcount
cur.execute("DELETE FROM t_order WHERE order_id = ?", ids[11])
out("delete", n, cur.rowcount)
conn.commit()

# Transactions: pyodbc's autocommit is off, so a rollback undoes what
# the connection wrote since its last commit, on every data node.
for u in (1, 2, 3, 4):
    cur.execute(ins, u, "GONE", 1, None, None, None)
cur.execute("UPDATE t_order SET status = ? WHERE order_id = ?", "GONE", ids[2])
out("inside", cur.execute("SELECT COUNT(*) FROM t_order WHERE status = ?", "GONE").fetchval())
other = pyodbc.connect(conn_str, autocommit=True)
out("other connection", other.cursor().execute("SELECT COUNT(*) FROM t_order WHERE status = ?", "GONE").fetchval())
conn.rollback()
out("rolled back", cur.execute("SELECT COUNT(*) FROM t_order WHERE status = ?", "GONE").fetchval(),
    cur.execute("SELECT status FROM t_order WHERE order_id = ?", ids[2]).fetchval())
cur.execute(ins, 3, "TX", 3, None, None, None)
tx = cur.execute("SELECT LAST_INSERT_ID()").fetchval()
cur.execute(item, tx, 3, "tx", 1)
cur.execute(ins, 4, "TX", 4, None, None, None)
conn.commit()
learn(cur, "t_order", "order_id", "o")
out("committed", [(label(k), u) for k, u in other.cursor().execute(
    "SELECT order_id, user_id FROM t_order WHERE status = ? ORDER BY order_id", "TX").fetchall()],
    other.cursor().execute("SELECT COUNT(*) FROM t_order_item WHERE order_id = ? AND user_id = ?", tx, 3).fetchval())
other.close()

# Errors: SQLSTATE and native code, and the connection after each.
failed("duplicate key", lambda: cur.execute("INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, ?)", ids[0], 1, "DUP").rowcount)
failed("duplicate unique", lambda: cur.execute(item, ids[0], 1, "s0", 9).rowcount)
failed("executemany duplicate", lambda: cur.executemany(item, [(ids[3], 4, "new", 1), (ids[0], 1, "s0", 9)]))
failed("syntax", lambda: cur.execute("SELEC 1").fetchall())
failed("unknown column", lambda: cur.execute("SELECT nope FROM t_order WHERE user_id = ?", 1).fetchall())
failed("unknown table", lambda: cur.execute("SELECT * FROM t_nope").fetchall())
failed("two statements", lambda: cur.execute("SELECT 1; SELECT 2").fetchall())
failed("too long", lambda: cur.execute("INSERT INTO t_order (user_id, status) VALUES (?, ?)", 1, "x" * 40).rowcount)
conn.rollback()
# The isolation level through SQLSetConnectAttr (SET SESSION TRANSACTION
# ISOLATION LEVEL), then a read in that level.
conn.set_attr(pyodbc.SQL_ATTR_TXN_ISOLATION, pyodbc.SQL_TXN_READ_COMMITTED)
out("isolation", cur.execute("SELECT @@tx_isolation").fetchval(), cur.execute("SELECT COUNT(*) FROM t_order WHERE user_id = ?", 2).fetchval())
conn.commit()
out("after errors", tuple(cur.execute("SELECT COUNT(*), SUM(user_id) FROM t_order").fetchone()),
    cur.execute("SELECT COUNT(*) FROM t_order_item WHERE sku = ?", "new").fetchval())
conn.close()
