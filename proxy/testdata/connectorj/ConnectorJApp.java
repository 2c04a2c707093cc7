// A small JDBC application (MariaDB Connector/J 2.x, Debian's
// libmariadb-java), run by TestConnectorJApplication through the proxy and
// directly on one MariaDB holding an unsharded copy of the tables. It runs
// the same steps under several URL options (the driver's defaults,
// server-side prepared statements, rewritten batches, no bulk) and prints
// one line per step; both runs must print the same. Keys are not printed
// (the proxy's Snowflake keys and MariaDB's AUTO_INCREMENT differ): what is
// printed is what an application relies on, that they are there, distinct,
// consecutive within a statement and find their rows.
//
// Usage: java -cp mariadb-java-client.jar:. ConnectorJApp host port user password database
import java.io.ByteArrayInputStream;
import java.io.Reader;
import java.io.StringReader;
import java.math.BigDecimal;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;

public class ConnectorJApp {
  static String base;
  static String mode;
  static String database;

  interface Step {
    Object run() throws Exception;
  }

  /** step prints name and what body returns, or the SQLException it throws. */
  static void step(String name, Step body) {
    String out;
    try {
      out = String.valueOf(body.run());
    } catch (SQLException e) {
      out = "ERROR " + e.getErrorCode() + " " + e.getSQLState() + " " + message(e);
    } catch (Exception e) {
      out = "EXCEPTION " + e.getClass().getSimpleName() + " " + e.getMessage();
    }
    System.out.println(mode + " | " + name + " | " + out);
  }

  /** message is the server's message without Connector/J's prefixes. */
  static String message(SQLException e) {
    String m = e.getMessage();
    int i = m.indexOf("\nQuery is:");
    if (i >= 0) {
      m = m.substring(0, i);
    }
    i = m.lastIndexOf(") ");
    if (m.startsWith("(conn=") && i >= 0) {
      m = m.substring(i + 2);
    }
    // The database's name and the keys in messages are each run's own.
    return m.replace(database + ".", "DB.").replaceAll("'[0-9]+'", "'N'");
  }

  static Connection open(String options) throws SQLException {
    return DriverManager.getConnection(base + (options.isEmpty() ? "" : "&" + options));
  }

  static String rows(ResultSet rs) throws SQLException {
    ResultSetMetaData md = rs.getMetaData();
    StringJoiner all = new StringJoiner(" ");
    while (rs.next()) {
      StringJoiner row = new StringJoiner(",", "[", "]");
      for (int i = 1; i <= md.getColumnCount(); i++) {
        row.add(value(rs, i, md.getColumnType(i)));
      }
      all.add(row.toString());
    }
    rs.close();
    return all.toString();
  }

  static String value(ResultSet rs, int i, int type) throws SQLException {
    Object v;
    switch (type) {
      case java.sql.Types.BLOB:
      case java.sql.Types.LONGVARBINARY:
      case java.sql.Types.VARBINARY:
      case java.sql.Types.BINARY:
        byte[] b = rs.getBytes(i);
        v = b == null ? null : hex(b);
        break;
      case java.sql.Types.TIMESTAMP:
        v = rs.getTimestamp(i);
        break;
      case java.sql.Types.DECIMAL:
        v = rs.getBigDecimal(i);
        break;
      default:
        v = rs.getString(i);
    }
    return rs.wasNull() ? "NULL" : String.valueOf(v);
  }

  static String hex(byte[] b) {
    StringBuilder s = new StringBuilder();
    for (byte x : b) {
      s.append(String.format("%02x", x));
    }
    return s.toString();
  }

  static String query(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement()) {
      return rows(s.executeQuery(sql));
    }
  }

  static List<Long> keys(Statement s) throws SQLException {
    List<Long> k = new ArrayList<>();
    try (ResultSet rs = s.getGeneratedKeys()) {
      while (rs.next()) {
        k.add(rs.getLong(1));
      }
    }
    return k;
  }

  /** describe says what an application sees of generated keys, not their values. */
  static String describe(Connection c, List<Long> k, String table, String key, String col)
      throws SQLException {
    return describe(c, k, table, key, col, true);
  }

  /**
   * describe with consecutive false leaves out whether the keys are consecutive: the keys
   * of separate statements (a batch) are consecutive with AUTO_INCREMENT only.
   */
  static String describe(Connection c, List<Long> k, String table, String key, String col, boolean perStatement)
      throws SQLException {
    boolean consecutive = true;
    for (int i = 1; i < k.size(); i++) {
      consecutive &= k.get(i) == k.get(0) + i;
    }
    String order = perStatement ? ", consecutive " + consecutive : ", distinct " + (k.stream().distinct().count() == k.size());
    StringJoiner found = new StringJoiner(",", "[", "]");
    for (long id : k) {
      try (PreparedStatement p =
          c.prepareStatement("SELECT " + col + " FROM " + table + " WHERE " + key + " = ?")) {
        p.setLong(1, id);
        try (ResultSet rs = p.executeQuery()) {
          found.add(rs.next() ? rs.getString(1) : "missing");
        }
      }
    }
    return k.size()
        + " keys, positive " + k.stream().allMatch(x -> x > 0)
        + order
        + ", rows " + found;
  }

  static String counts(int[] n) {
    StringJoiner s = new StringJoiner(",", "[", "]");
    for (int x : n) {
      s.add(String.valueOf(x));
    }
    return s.toString();
  }

  static void schema(Connection c) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS t_order_item");
      s.execute("DROP TABLE IF EXISTS t_order");
      s.execute("DROP TABLE IF EXISTS t_dict");
      s.execute(
          "CREATE TABLE t_order (order_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, user_id INT NOT"
              + " NULL, status VARCHAR(32), amount DECIMAL(12,2), created DATETIME(3), updated"
              + " TIMESTAMP(6) NULL, note TEXT, payload BLOB)");
      s.execute(
          "CREATE TABLE t_order_item (item_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, order_id"
              + " BIGINT NOT NULL, user_id INT NOT NULL, qty INT)");
      s.execute("CREATE TABLE t_dict (code VARCHAR(8) NOT NULL PRIMARY KEY, name VARCHAR(32))");
    }
  }

  public static void main(String[] args) throws Exception {
    database = args[4];
    base =
        "jdbc:mariadb://" + args[0] + ":" + args[1] + "/" + args[4] + "?user=" + args[2]
            + "&password=" + args[3];
    mode = "setup";
    try (Connection c = open("")) {
      schema(c);
      step("version", () -> {
        String v = c.getMetaData().getDatabaseProductVersion();
        return c.getMetaData().getDatabaseProductName() + " " + v.substring(0, v.indexOf("-MariaDB") + 8);
      });
      step("session", () -> c.getAutoCommit() + " " + c.getTransactionIsolation() + " "
          + c.getCatalog().equals(args[4]) + " "
          + query(c, "SELECT @@auto_increment_increment, @@sql_mode, @@session.time_zone, @@character_set_client, @@character_set_results, @@max_allowed_packet > 0"));
    }
    String[][] modes = {
      {"default", ""},
      {"serverPrep", "useServerPrepStmts=true"},
      {"rewrite", "rewriteBatchedStatements=true"},
      {"noBulk", "useBulkStmts=false&useServerPrepStmts=true"},
      {"multi", "allowMultiQueries=true&useCompression=true"},
    };
    int u = 0;
    for (String[] m : modes) {
      mode = m[0];
      u += 100;
      try (Connection c = open(m[1])) {
        steps(c, u);
      }
    }
    mode = "pool";
    pool(args[4]);
    mode = "meta";
    try (Connection c = open("")) {
      metadata(c, args[4]);
    }
  }

  static void steps(Connection c, int u) throws Exception {
    step("statement insert key", () -> {
      try (Statement s = c.createStatement()) {
        int n = s.executeUpdate("INSERT INTO t_order (user_id, status, amount) VALUES (" + (u + 1) + ", 'one', 1.50)", Statement.RETURN_GENERATED_KEYS);
        return n + " " + describe(c, keys(s), "t_order", "order_id", "status");
      }
    });
    step("statement multi-row keys", () -> {
      try (Statement s = c.createStatement()) {
        int n = s.executeUpdate("INSERT INTO t_order (user_id, status) VALUES (" + (u + 2) + ", 'm1'), (" + (u + 3) + ", 'm2'), (" + (u + 4) + ", 'm3')", Statement.RETURN_GENERATED_KEYS);
        return n + " " + describe(c, keys(s), "t_order", "order_id", "status");
      }
    });
    step("last_insert_id", () -> query(c, "SELECT LAST_INSERT_ID() > 0"));
    step("prepared insert types", () -> {
      try (PreparedStatement p = c.prepareStatement("INSERT INTO t_order (user_id, status, amount, created, updated, note, payload) VALUES (?, ?, ?, ?, ?, ?, ?)", Statement.RETURN_GENERATED_KEYS)) {
        p.setInt(1, u + 5);
        p.setString(2, "typed");
        p.setBigDecimal(3, new BigDecimal("1234567890.12"));
        p.setTimestamp(4, Timestamp.valueOf("2024-02-29 13:14:15.678"));
        p.setTimestamp(5, Timestamp.valueOf("2025-06-30 23:59:58.123456"));
        p.setClob(6, new StringReader("a clob: ünïcødé ✓ " + "x".repeat(3000)));
        p.setBlob(7, new ByteArrayInputStream(new byte[] {0, 1, 2, (byte) 0xff, 0x27, 0x5c, 0}));
        int n = p.executeUpdate();
        return n + " " + describe(c, keys(p), "t_order", "order_id", "status");
      }
    });
    step("prepared select types", () -> {
      try (PreparedStatement p = c.prepareStatement("SELECT status, amount, created, updated, payload, LENGTH(note) FROM t_order WHERE user_id = ?")) {
        p.setInt(1, u + 5);
        return rows(p.executeQuery());
      }
    });
    step("lobs", () -> {
      try (PreparedStatement p = c.prepareStatement("SELECT note, payload FROM t_order WHERE user_id = ?")) {
        p.setInt(1, u + 5);
        try (ResultSet rs = p.executeQuery()) {
          rs.next();
          Clob cl = rs.getClob(1);
          Blob bl = rs.getBlob(2);
          String s = cl.getSubString(1, (int) cl.length());
          return cl.length() + " " + s.substring(0, 20) + " " + bl.length() + " " + hex(bl.getBytes(1, (int) bl.length()));
        }
      }
    });
    step("prepared setObject types", () -> {
      try (PreparedStatement p = c.prepareStatement("SELECT ? + 1, ?, CAST(? AS DECIMAL(10,3)), ?, ? IS NULL")) {
        p.setObject(1, 41);
        p.setObject(2, "str'\\");
        p.setObject(3, new BigDecimal("-3.14159"));
        p.setObject(4, Timestamp.valueOf("1999-12-31 23:59:59.5"));
        p.setNull(5, java.sql.Types.VARCHAR);
        return rows(p.executeQuery());
      }
    });
    step("prepared batch", () -> {
      try (PreparedStatement p = c.prepareStatement("INSERT INTO t_order (user_id, status, amount) VALUES (?, ?, ?)")) {
        for (int i = 0; i < 6; i++) {
          p.setInt(1, u + 10 + i);
          p.setString(2, "batch" + i);
          p.setBigDecimal(3, new BigDecimal(i + ".25"));
          p.addBatch();
        }
        return counts(p.executeBatch()) + " " + query(c, "SELECT COUNT(*), SUM(amount) FROM t_order WHERE user_id BETWEEN " + (u + 10) + " AND " + (u + 15));
      }
    });
    step("prepared batch keys", () -> {
      try (PreparedStatement p = c.prepareStatement("INSERT INTO t_order (user_id, status) VALUES (?, ?)", Statement.RETURN_GENERATED_KEYS)) {
        for (int i = 0; i < 4; i++) {
          p.setInt(1, u + 20 + i);
          p.setString(2, "bk" + i);
          p.addBatch();
        }
        int[] n = p.executeBatch();
        List<Long> k = keys(p);
        return counts(n) + " " + describe(c, k, "t_order", "order_id", "status", false);
      }
    });
    step("prepared batch items", () -> {
      long order;
      try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT order_id FROM t_order WHERE user_id = " + (u + 1))) {
        rs.next();
        order = rs.getLong(1);
      }
      try (PreparedStatement p = c.prepareStatement("INSERT INTO t_order_item (order_id, user_id, qty) VALUES (?, ?, ?)", Statement.RETURN_GENERATED_KEYS)) {
        for (int i = 1; i <= 3; i++) {
          p.setLong(1, order);
          p.setInt(2, u + 1);
          p.setInt(3, i);
          p.addBatch();
        }
        int[] n = p.executeBatch();
        return counts(n) + " " + describe(c, keys(p), "t_order_item", "item_id", "qty", false);
      }
    });
    step("statement batch", () -> {
      try (Statement s = c.createStatement()) {
        s.addBatch("INSERT INTO t_order (user_id, status) VALUES (" + (u + 30) + ", 'sb')");
        s.addBatch("UPDATE t_order SET status = 'sb2' WHERE user_id = " + (u + 30));
        s.addBatch("INSERT INTO t_dict (code, name) VALUES ('c" + u + "', 'dict')");
        s.addBatch("DELETE FROM t_order WHERE user_id = " + (u + 31));
        return counts(s.executeBatch()) + " " + query(c, "SELECT status FROM t_order WHERE user_id = " + (u + 30));
      }
    });
    step("batch error", () -> {
      try (PreparedStatement p = c.prepareStatement("INSERT INTO t_dict (code, name) VALUES (?, ?)")) {
        p.setString(1, "e" + u);
        p.setString(2, "first");
        p.addBatch();
        p.setString(1, "e" + u);
        p.setString(2, "dup");
        p.addBatch();
        p.setString(1, "f" + u);
        p.setString(2, "after");
        p.addBatch();
        try {
          return "no error " + counts(p.executeBatch());
        } catch (java.sql.BatchUpdateException e) {
          return "BatchUpdateException " + e.getErrorCode() + " " + e.getSQLState() + " " + counts(e.getUpdateCounts()) + " " + query(c, "SELECT code, name FROM t_dict WHERE code IN ('e" + u + "', 'f" + u + "') ORDER BY code");
        }
      }
    });
    step("rollback", () -> {
      c.setAutoCommit(false);
      try (Statement s = c.createStatement()) {
        s.executeUpdate("INSERT INTO t_order (user_id, status) VALUES (" + (u + 40) + ", 'gone')");
        s.executeUpdate("INSERT INTO t_order (user_id, status) VALUES (" + (u + 41) + ", 'gone')");
        c.rollback();
        String after = query(c, "SELECT COUNT(*) FROM t_order WHERE user_id IN (" + (u + 40) + ", " + (u + 41) + ")");
        c.commit();
        return after;
      } finally {
        c.setAutoCommit(true);
      }
    });
    step("commit", () -> {
      c.setAutoCommit(false);
      try (PreparedStatement p = c.prepareStatement("INSERT INTO t_order (user_id, status) VALUES (?, 'kept')")) {
        p.setInt(1, u + 42);
        p.executeUpdate();
        p.setInt(1, u + 43);
        p.executeUpdate();
        c.commit();
      } finally {
        c.setAutoCommit(true);
      }
      return query(c, "SELECT user_id, status FROM t_order WHERE user_id IN (" + (u + 42) + ", " + (u + 43) + ") ORDER BY user_id");
    });
    step("savepoints", () -> {
      c.setAutoCommit(false);
      try (Statement s = c.createStatement()) {
        s.executeUpdate("INSERT INTO t_order (user_id, status) VALUES (" + (u + 50) + ", 'sp-before')");
        Savepoint sp = c.setSavepoint("sp1");
        s.executeUpdate("INSERT INTO t_order (user_id, status) VALUES (" + (u + 51) + ", 'sp-undone')");
        c.rollback(sp);
        Savepoint sp2 = c.setSavepoint();
        s.executeUpdate("INSERT INTO t_order (user_id, status) VALUES (" + (u + 52) + ", 'sp-after')");
        c.releaseSavepoint(sp2);
        c.commit();
      } finally {
        c.setAutoCommit(true);
      }
      return query(c, "SELECT user_id, status FROM t_order WHERE user_id BETWEEN " + (u + 50) + " AND " + (u + 52) + " ORDER BY user_id");
    });
    step("metadata sharded select", () -> {
      try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT o.*, o.order_id AS id, amount * 2 AS twice FROM t_order o WHERE user_id BETWEEN " + u + " AND " + (u + 99) + " ORDER BY user_id")) {
        ResultSetMetaData md = rs.getMetaData();
        StringJoiner cols = new StringJoiner(" ");
        for (int i = 1; i <= md.getColumnCount(); i++) {
          cols.add(md.getColumnName(i) + "/" + md.getColumnLabel(i) + ":" + md.getColumnTypeName(i) + "(" + md.getColumnType(i) + "," + md.getPrecision(i) + "," + md.getScale(i) + ")"
              + " table=" + md.getTableName(i) + " catalog=" + md.getCatalogName(i).equals(c.getCatalog())
              + " null=" + md.isNullable(i) + " signed=" + md.isSigned(i) + " auto=" + md.isAutoIncrement(i)
              + " class=" + md.getColumnClassName(i));
        }
        int n = 0;
        while (rs.next()) {
          n++;
        }
        return n + " rows " + cols;
      }
    });
    step("prepared metadata", () -> {
      try (PreparedStatement p = c.prepareStatement("SELECT user_id, status, amount FROM t_order WHERE user_id IN (?, ?) ORDER BY user_id")) {
        ResultSetMetaData md = p.getMetaData();
        String before = md == null ? "null" : md.getColumnCount() + " " + md.getColumnName(2) + " " + md.getTableName(2);
        p.setInt(1, u + 1);
        p.setInt(2, u + 5);
        return before + " " + p.getParameterMetaData().getParameterCount() + " " + rows(p.executeQuery());
      }
    });
    step("streaming", () -> {
      try (PreparedStatement p = c.prepareStatement("INSERT INTO t_order_item (order_id, user_id, qty) VALUES (?, ?, ?)")) {
        for (int i = 0; i < 300; i++) {
          p.setLong(1, 1000 + i);
          p.setInt(2, u + 60 + i % 7);
          p.setInt(3, i);
          p.addBatch();
        }
        p.executeBatch();
      }
      try (Statement s = c.createStatement()) {
        s.setFetchSize(Integer.MIN_VALUE);
        long sum = 0;
        int n = 0;
        String interleaved;
        try (ResultSet rs = s.executeQuery("SELECT qty, user_id FROM t_order_item WHERE user_id BETWEEN " + (u + 60) + " AND " + (u + 66) + " ORDER BY qty")) {
          rs.next();
          sum += rs.getLong(1);
          n++;
          // Another statement while the stream is open: the driver reads the rest first.
          interleaved = query(c, "SELECT COUNT(*) FROM t_order_item WHERE user_id BETWEEN " + (u + 60) + " AND " + (u + 66));
          while (rs.next()) {
            sum += rs.getLong(1);
            n++;
          }
        }
        s.setFetchSize(50);
        int m = 0;
        try (ResultSet rs = s.executeQuery("SELECT qty FROM t_order_item WHERE user_id BETWEEN " + (u + 60) + " AND " + (u + 66) + " ORDER BY qty DESC LIMIT 120")) {
          while (rs.next()) {
            m++;
            if (m == 1) {
              sum += 1000000L * rs.getLong(1);
            }
          }
        }
        return n + " " + sum + " " + interleaved + " " + m;
      }
    });
    step("duplicate key", () -> {
      long order;
      try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT order_id FROM t_order WHERE user_id = " + (u + 1))) {
        rs.next();
        order = rs.getLong(1);
      }
      try (PreparedStatement p = c.prepareStatement("INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'dup')")) {
        p.setLong(1, order);
        p.setInt(2, u + 1);
        p.executeUpdate();
        return "no error";
      }
    });
    step("after duplicate", () -> query(c, "SELECT COUNT(*) FROM t_order WHERE user_id = " + (u + 1)));
    step("syntax error", () -> query(c, "SELEC 1 FROM t_order"));
    step("unknown column", () -> query(c, "SELECT nope FROM t_order WHERE user_id = 1"));
    step("after errors", () -> query(c, "SELECT COUNT(*) > 0 FROM t_order"));
    step("error in transaction", () -> {
      c.setAutoCommit(false);
      try (Statement s = c.createStatement()) {
        s.executeUpdate("INSERT INTO t_order (user_id, status) VALUES (" + (u + 70) + ", 'tx')");
        String e;
        try {
          s.executeUpdate("INSERT INTO t_dict (code, name) VALUES ('c" + u + "', 'again')");
          e = "no error";
        } catch (SQLException x) {
          e = x.getErrorCode() + " " + x.getSQLState();
        }
        s.executeUpdate("INSERT INTO t_order (user_id, status) VALUES (" + (u + 71) + ", 'tx')");
        c.commit();
        return e + " " + query(c, "SELECT COUNT(*) FROM t_order WHERE user_id IN (" + (u + 70) + ", " + (u + 71) + ")");
      } finally {
        c.setAutoCommit(true);
      }
    });
    step("update counts", () -> {
      try (PreparedStatement p = c.prepareStatement("UPDATE t_order SET amount = amount + ? WHERE user_id BETWEEN ? AND ? AND amount IS NOT NULL")) {
        p.setBigDecimal(1, new BigDecimal("0.01"));
        p.setInt(2, u);
        p.setInt(3, u + 99);
        int n = p.executeUpdate();
        return n + " " + query(c, "SELECT SUM(amount), MAX(amount), MIN(created), MAX(updated) FROM t_order WHERE user_id BETWEEN " + u + " AND " + (u + 99));
      }
    });
    step("query timeout", () -> {
      try (Statement s = c.createStatement()) {
        s.setQueryTimeout(5);
        String a = rows(s.executeQuery("SELECT COUNT(*) FROM t_order WHERE user_id BETWEEN " + u + " AND " + (u + 99)));
        try (PreparedStatement p = c.prepareStatement("SELECT status FROM t_order WHERE user_id = ?")) {
          p.setQueryTimeout(3);
          p.setInt(1, u + 1);
          a += " " + rows(p.executeQuery());
        }
        s.setQueryTimeout(1);
        try {
          s.executeQuery("SELECT SLEEP(3)").close();
          a += " no timeout";
        } catch (SQLException e) {
          a += " " + e.getClass().getSimpleName() + " " + e.getErrorCode() + " " + e.getSQLState();
        }
        s.setQueryTimeout(0);
        return a + " " + query(c, "SELECT 1");
      }
    });
    step("max rows", () -> {
      try (Statement s = c.createStatement()) {
        s.setMaxRows(3);
        String a = rows(s.executeQuery("SELECT user_id FROM t_order WHERE user_id BETWEEN " + u + " AND " + (u + 99) + " ORDER BY user_id"));
        s.setMaxRows(0);
        return a + " " + query(c, "SELECT COUNT(*) FROM t_order WHERE user_id BETWEEN " + u + " AND " + (u + 99)) + " " + query(c, "SELECT @@sql_select_limit = @@global.sql_select_limit");
      }
    });
    step("multiple results", () -> {
      // Without allowMultiQueries MariaDB reads the text as one statement
      // (1064 near the second); the proxy says why: only the codes count.
      try (Statement s = c.createStatement()) {
        StringJoiner r = new StringJoiner(" ");
        boolean isRs = s.execute("SELECT 1; UPDATE t_order SET status = 'mr' WHERE user_id = " + (u + 2) + "; SELECT status FROM t_order WHERE user_id = " + (u + 2));
        while (true) {
          if (isRs) {
            r.add(rows(s.getResultSet()));
          } else if (s.getUpdateCount() == -1) {
            break;
          } else {
            r.add("count " + s.getUpdateCount());
          }
          isRs = s.getMoreResults();
        }
        return r;
      } catch (SQLException e) {
        return "ERROR " + e.getErrorCode() + " " + e.getSQLState();
      }
    });
    step("read only", () -> {
      c.setReadOnly(true);
      String a = query(c, "SELECT COUNT(*) > 0 FROM t_order WHERE user_id = " + (u + 1)) + " " + c.isReadOnly();
      c.setReadOnly(false);
      return a;
    });
    step("scrollable", () -> {
      try (Statement s = c.createStatement(ResultSet.TYPE_SCROLL_INSENSITIVE, ResultSet.CONCUR_READ_ONLY);
          ResultSet rs = s.executeQuery("SELECT user_id FROM t_order WHERE user_id BETWEEN " + u + " AND " + (u + 99) + " ORDER BY user_id DESC")) {
        rs.last();
        String a = rs.getRow() + ":" + rs.getInt(1);
        rs.absolute(2);
        a += " " + rs.getInt(1);
        rs.beforeFirst();
        rs.next();
        return a + " " + rs.getInt(1);
      }
    });
    step("warnings", () -> {
      try (Statement s = c.createStatement()) {
        // One route: each data node of a scatter raises its own warning.
        long order;
        try (ResultSet rs = s.executeQuery("SELECT order_id FROM t_order WHERE user_id = " + (u + 1))) {
          rs.next();
          order = rs.getLong(1);
        }
        rows(s.executeQuery("SELECT CAST('abc' AS SIGNED), CAST('1x' AS SIGNED) FROM t_order WHERE user_id = " + (u + 1) + " AND order_id = " + order));
        StringJoiner w = new StringJoiner(" ");
        for (java.sql.SQLWarning x = s.getWarnings(); x != null; x = x.getNextWarning()) {
          w.add(x.getErrorCode() + ":" + x.getMessage());
        }
        s.clearWarnings();
        rows(s.executeQuery("SELECT 1"));
        return w + " then " + s.getWarnings();
      }
    });
    step("aggregate", () -> query(c, "SELECT user_id % 3 AS g, COUNT(*), SUM(amount), AVG(amount) FROM t_order WHERE user_id BETWEEN " + u + " AND " + (u + 99) + " GROUP BY user_id % 3 ORDER BY g"));
  }

  static void pool(String db) throws Exception {
    org.mariadb.jdbc.MariaDbPoolDataSource ds = new org.mariadb.jdbc.MariaDbPoolDataSource(base + "&maxPoolSize=1&minPoolSize=1&useResetConnection=true");
    try {
      try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
        step("first lease", () -> {
          s.execute("SET @app_var = 42");
          s.execute("SET SESSION sql_mode = 'ANSI_QUOTES'");
          s.execute("CREATE TEMPORARY TABLE tmp_pool (x INT)");
          c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
          c.setAutoCommit(false);
          s.executeUpdate("INSERT INTO t_order (user_id, status) VALUES (900, 'uncommitted')");
          return query(c, "SELECT @app_var, @@sql_mode, @@tx_isolation, @@autocommit");
        });
      }
      try (Connection c = ds.getConnection()) {
        step("second lease", () -> c.getAutoCommit() + " " + c.getTransactionIsolation() + " "
            + query(c, "SELECT @app_var, @@sql_mode = @@global.sql_mode, @@tx_isolation, @@autocommit")
            + " " + query(c, "SELECT COUNT(*) FROM t_order WHERE user_id = 900"));
        step("temporary table gone", () -> query(c, "SELECT COUNT(*) FROM tmp_pool"));
        step("valid", () -> c.isValid(5));
      }
    } finally {
      ds.close();
    }
    step("setCatalog", () -> {
      try (Connection c = open("")) {
        c.setCatalog(db);
        String same = c.getCatalog();
        String other;
        try {
          c.setCatalog("no_such_db");
          other = "no error";
        } catch (SQLException e) {
          other = e.getErrorCode() + " " + e.getSQLState();
        }
        return same.equals(db) + " " + other + " " + c.getCatalog().equals(db) + " " + query(c, "SELECT COUNT(*) > 0 FROM t_order");
      }
    });
  }

  // The tables this application creates; others in the schema (another
  // test's) are not its business.
  static final java.util.Set<String> OWN_TABLES = java.util.Set.of("t_dict", "t_order", "t_order_item");

  static void metadata(Connection c, String db) throws Exception {
    DatabaseMetaData md = c.getMetaData();
    step("getTables", () -> {
      StringJoiner s = new StringJoiner(" ");
      try (ResultSet rs = md.getTables(db, null, "t_%", new String[] {"TABLE"})) {
        while (rs.next()) {
          if (OWN_TABLES.contains(rs.getString("TABLE_NAME"))) {
            s.add(rs.getString("TABLE_NAME") + ":" + rs.getString("TABLE_TYPE") + ":" + db.equals(rs.getString("TABLE_CAT")));
          }
        }
      }
      return s;
    });
    step("getTables all", () -> {
      StringJoiner s = new StringJoiner(" ");
      try (ResultSet rs = md.getTables(null, null, "%", null)) {
        while (rs.next()) {
          if (db.equals(rs.getString("TABLE_CAT")) && OWN_TABLES.contains(rs.getString("TABLE_NAME"))) {
            s.add(rs.getString("TABLE_NAME"));
          }
        }
      }
      return s;
    });
    step("getColumns", () -> {
      StringJoiner s = new StringJoiner(" ");
      try (ResultSet rs = md.getColumns(db, null, "t_order", null)) {
        while (rs.next()) {
          s.add(rs.getString("COLUMN_NAME") + ":" + rs.getString("TYPE_NAME") + ":" + rs.getInt("DATA_TYPE") + ":" + rs.getInt("COLUMN_SIZE") + ":" + rs.getInt("DECIMAL_DIGITS") + ":" + rs.getString("IS_NULLABLE") + ":" + rs.getString("IS_AUTOINCREMENT") + ":" + rs.getInt("ORDINAL_POSITION"));
        }
      }
      return s;
    });
    step("getPrimaryKeys", () -> {
      StringJoiner s = new StringJoiner(" ");
      try (ResultSet rs = md.getPrimaryKeys(db, null, "t_order_item")) {
        while (rs.next()) {
          s.add(rs.getString("TABLE_NAME") + "." + rs.getString("COLUMN_NAME") + ":" + rs.getInt("KEY_SEQ"));
        }
      }
      return s;
    });
    step("getIndexInfo", () -> {
      StringJoiner s = new StringJoiner(" ");
      try (ResultSet rs = md.getIndexInfo(db, null, "t_dict", false, false)) {
        while (rs.next()) {
          s.add(rs.getString("INDEX_NAME") + ":" + rs.getString("COLUMN_NAME") + ":" + rs.getBoolean("NON_UNIQUE"));
        }
      }
      return s;
    });
    step("getCatalogs", () -> {
      boolean found = false;
      try (ResultSet rs = md.getCatalogs()) {
        while (rs.next()) {
          found |= db.equals(rs.getString(1));
        }
      }
      return found;
    });
    step("count by table", () -> query(c, "SELECT COUNT(*) FROM t_order") + " " + query(c, "SELECT COUNT(*) FROM t_order_item") + " " + query(c, "SELECT COUNT(*) FROM t_dict"));
    step("totals", () -> query(c, "SELECT COUNT(*), SUM(amount), COUNT(DISTINCT status) FROM t_order"));
  }
}
