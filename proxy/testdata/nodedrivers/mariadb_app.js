// A small application on MariaDB's Node.js connector (mariadb 3.x, its
// promise API with the defaults: pipelining on, batch() with
// COM_STMT_BULK_EXECUTE where the server offers it, a prepare cache,
// insertId as BigInt), run by TestMariadbNodeApplication through the proxy
// and against one MariaDB: tables created, inserts without keys,
// selects by key, ranges, pages and aggregates, prepared statements,
// many statements pipelined on one connection (one failing in the
// middle), batch() of hundreds of rows, transactions committed and rolled
// back, a duplicate key, queryStream, reset, ping, a pool and importFile.
// It prints one line per step; both runs must print the same. Keys are
// not printed: the proxy's and MariaDB's differ.
const mariadb = require('mariadb');
const path = require('path');
const [host, port, user, password, database] = process.argv.slice(2);
const config = { host, port: +port, user, password, database };

const show = v => JSON.stringify(v, (_, x) => typeof x === 'bigint' ? 'n' + x : x);
const out = (...a) => console.log(a.map(show).join(' '));
// failure is what an error tells an application, with the digits of the
// keys it may quote masked.
const failure = e => [e.code, e.errno, e.sqlState, (e.text || '').replace(/'\d+'/g, "'N'")];
const settle = p => p.then(r => r, e => ({ failed: failure(e) }));

(async () => {
  const conn = await mariadb.createConnection(config);
  out('connected', conn.info.isMariaDB(), conn.info.hasMinVersion(10, 2, 7), await conn.query('SELECT DATABASE() AS db, @@autocommit AS ac').then(r => r[0].ac));
  await conn.query('DROP TABLE IF EXISTS t_order_item');
  await conn.query('DROP TABLE IF EXISTS t_order');
  await conn.query('CREATE TABLE t_order (order_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(16), amount DECIMAL(10,2), created DATETIME)');
  await conn.query('CREATE TABLE t_order_item (item_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, order_id BIGINT NOT NULL, user_id INT NOT NULL, qty INT)');

  // Inserts without keys; the key comes back as a BigInt.
  const one = await conn.query('INSERT INTO t_order (user_id, status, amount, created) VALUES (?, ?, ?, ?)', [1, 'NEW', 12.5, new Date(Date.UTC(2024, 0, 2, 3, 4, 5))]);
  out('insert', one.affectedRows, typeof one.insertId, one.insertId > 0n, one.warningStatus);
  const byKey = await conn.query('SELECT user_id, status, amount, created FROM t_order WHERE order_id = ?', [one.insertId]);
  out('by key', byKey.map(r => [r.user_id, r.status, r.amount, r.created instanceof Date]));
  const many = await conn.query('INSERT INTO t_order (user_id, status, amount) VALUES (?, ?, ?), (?, ?, ?), (?, ?, ?)', [2, 'a', 1, 3, 'b', 2, 4, 'c', 3]);
  const keys = (await conn.query('SELECT order_id FROM t_order WHERE order_id IN (?, ?, ?) ORDER BY order_id', [many.insertId, many.insertId + 1n, many.insertId + 2n])).map(r => r.order_id);
  out('multi-row insert', many.affectedRows, keys.length, keys[0] === many.insertId);
  out('last_insert_id', (await conn.query('SELECT LAST_INSERT_ID() AS id'))[0].id === many.insertId);

  // Prepared statements (conn.execute: PREPARE then EXECUTE pipelined,
  // then from the prepare cache).
  for (let i = 0; i < 30; i++) {
    await conn.execute('INSERT INTO t_order (user_id, status, amount) VALUES (?, ?, ?)', [10 + (i % 4), 's' + String(i).padStart(2, '0'), i * 1.25]);
  }
  const ex = await conn.execute('SELECT status, amount FROM t_order WHERE order_id = ?', [one.insertId]);
  out('execute by key', ex.map(r => [r.status, r.amount]));
  const exIn = await conn.execute('SELECT COUNT(*) AS n, SUM(amount) AS s FROM t_order WHERE user_id IN (?, ?)', [10, 11]);
  out('execute in', exIn[0].n, exIn[0].s);
  const stmt = await conn.prepare('SELECT status FROM t_order WHERE user_id = ? ORDER BY status');
  out('prepared', stmt.parameterCount, (await stmt.execute([12])).map(r => r.status), (await stmt.execute([13])).length);
  stmt.close();

  // Ranges, ordering and pages.
  out('range', (await conn.query('SELECT status FROM t_order WHERE amount BETWEEN ? AND ? ORDER BY amount DESC', [10, 20])).map(r => r.status));
  out('page', (await conn.query('SELECT status, amount FROM t_order WHERE user_id IN (10, 11, 12, 13) ORDER BY status DESC LIMIT ? OFFSET ?', [5, 10])).map(r => [r.status, r.amount]));
  out('page execute', (await conn.execute('SELECT status FROM t_order ORDER BY amount, status LIMIT ?, ?', [3, 4])).map(r => r.status));

  // Aggregates, with the types the connector gives them.
  const agg = await conn.query('SELECT COUNT(*) AS n, SUM(amount) AS s, AVG(amount) AS a, MIN(status) AS lo, MAX(amount) AS hi FROM t_order');
  out('aggregate', agg[0], typeof agg[0].n, typeof agg[0].s);
  out('group by', await conn.query('SELECT user_id, COUNT(*) AS n, SUM(amount) AS s FROM t_order GROUP BY user_id HAVING COUNT(*) > 1 ORDER BY user_id'));
  out('distinct', (await conn.query('SELECT DISTINCT user_id FROM t_order WHERE amount >= 0 ORDER BY user_id DESC')).map(r => r.user_id));

  // Many statements pipelined on one connection: inserts without keys
  // and counts interleaved, one duplicate key in the middle.
  const sent = [];
  for (let i = 0; i < 240; i++) {
    const u = 20 + (i % 6);
    if (i === 120) {
      sent.push(settle(conn.query('INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, ?)', [one.insertId, 1, 'dup'])));
    } else if (i % 3 === 2) {
      sent.push(settle(conn.query('SELECT COUNT(*) AS n FROM t_order WHERE user_id = ?', [20 + ((i + 1) % 6)])));
    } else if (i % 5 === 4) {
      sent.push(settle(conn.execute('INSERT INTO t_order (user_id, status) VALUES (?, ?)', [u, 'pe' + i])));
    } else {
      sent.push(settle(conn.query('INSERT INTO t_order (user_id, status) VALUES (?, ?)', [u, 'p' + i])));
    }
  }
  const answers = await Promise.all(sent);
  out('pipelined', answers.map(r => r.failed ? r.failed : Array.isArray(r) ? Number(r[0].n) : r.affectedRows).join(','));
  out('pipelined failure', answers[120].failed);
  out('pipelined keys', new Set(answers.filter(r => r.insertId).map(r => String(r.insertId))).size);
  out('after pipeline', (await conn.query('SELECT user_id, COUNT(*) AS n FROM t_order WHERE user_id IN (20, 21, 22, 23, 24, 25) GROUP BY user_id ORDER BY user_id')).map(r => [r.user_id, r.n]));

  // Pipelined inside a transaction: a failure does not end it.
  await conn.beginTransaction();
  const inTx = await Promise.all([
    settle(conn.query('INSERT INTO t_order (user_id, status) VALUES (30, ?)', ['tx1'])),
    settle(conn.query('INSERT INTO t_order (user_id, statux) VALUES (30, ?)', ['tx2'])),
    settle(conn.query('INSERT INTO t_order (user_id, status) VALUES (31, ?)', ['tx3'])),
    settle(conn.query('SELECT COUNT(*) AS n FROM t_order WHERE user_id IN (30, 31)')),
  ]);
  await conn.commit();
  out('pipelined transaction', inTx.map(r => r.failed ? r.failed[0] : Array.isArray(r) ? r[0].n : r.affectedRows), (await conn.query('SELECT status FROM t_order WHERE user_id IN (30, 31) ORDER BY status')).map(r => r.status));

  // batch(): hundreds of rows without keys into the sharded table, with
  // the connector's defaults, without the bulk command, and aggregated.
  // The proxy offers no COM_STMT_BULK_EXECUTE in its greeting, so the
  // connector sends a batch as one execute per row, pipelined, even where
  // it sends MariaDB the bulk command: the default result is then an
  // array of one OK packet per row where MariaDB's is one OK packet for
  // the whole batch (README), and this step compares the rows affected
  // only. With bulk: false or fullResult: false both answer alike.
  const affected = r => Array.isArray(r) ? r.reduce((n, x) => n + x.affectedRows, 0) : r.affectedRows;
  const items = n => Array.from({ length: n }, (_, i) => [one.insertId, 40 + (i % 7), i % 50]);
  const b1 = await conn.batch('INSERT INTO t_order_item (order_id, user_id, qty) VALUES (?, ?, ?)', items(400));
  out('batch', affected(b1));
  const b2 = await conn.batch({ sql: 'INSERT INTO t_order_item (order_id, user_id, qty) VALUES (?, ?, ?)', bulk: false }, items(300));
  out('batch without bulk', Array.isArray(b2), b2.length, new Set(b2.map(r => String(r.insertId))).size, b2.every(r => r.affectedRows === 1));
  const b3 = await conn.batch({ sql: 'INSERT INTO t_order_item (order_id, user_id, qty) VALUES (?, ?, ?)', fullResult: false }, items(250));
  out('batch aggregated', b3.affectedRows, typeof b3.insertId);
  // A key free on MariaDB (AUTO_INCREMENT from 1) and through the proxy
  // (Snowflake keys), twice: the second row fails. Sent with bulk: false:
  // MariaDB's bulk command undoes the whole batch, while the executes the
  // connector sends the proxy instead keep the rows before the failing one
  // (README), a difference this step leaves out.
  const b4 = await settle(conn.batch({ sql: 'INSERT INTO t_order_item (item_id, order_id, user_id, qty) VALUES (?, ?, ?, ?)', bulk: false }, [[7777777, one.insertId, 47, 1], [7777777, one.insertId, 47, 2]]));
  out('batch duplicate', b4.failed);
  // The same with the defaults, inside a transaction rolled back on the
  // error: nothing is left either way (README).
  await conn.beginTransaction();
  const b4t = await settle(conn.batch('INSERT INTO t_order_item (item_id, order_id, user_id, qty) VALUES (?, ?, ?, ?)', [[7777778, one.insertId, 48, 1], [7777778, one.insertId, 48, 2]]));
  await conn.rollback();
  out('batch duplicate in transaction', b4t.failed, (await conn.query('SELECT COUNT(*) AS n FROM t_order_item WHERE user_id = 48'))[0].n);
  out('batch rows', (await conn.query('SELECT user_id, COUNT(*) AS n, SUM(qty) AS q FROM t_order_item GROUP BY user_id ORDER BY user_id')).map(r => [r.user_id, r.n, r.q]));
  out('batch update', affected(await conn.batch('UPDATE t_order_item SET qty = qty + 1 WHERE user_id = ? AND qty = ?', [[40, 0], [41, 1], [42, 2]])));

  // Transactions: committed, rolled back, and a duplicate key.
  await conn.beginTransaction();
  await conn.query('INSERT INTO t_order (user_id, status) VALUES (50, ?)', ['kept']);
  await conn.query('UPDATE t_order SET status = ? WHERE order_id = ?', ['PAID', one.insertId]);
  await conn.commit();
  await conn.beginTransaction();
  await conn.query('INSERT INTO t_order (user_id, status) VALUES (51, ?)', ['gone']);
  await conn.query('DELETE FROM t_order WHERE user_id = 50');
  await conn.rollback();
  out('transactions', (await conn.query('SELECT user_id, status FROM t_order WHERE user_id IN (50, 51) OR order_id = ? ORDER BY user_id', [one.insertId])).map(r => [r.user_id, r.status]));
  const dup = await settle(conn.query('INSERT INTO t_order (order_id, user_id, status) VALUES (?, 1, ?)', [one.insertId, 'again']));
  out('duplicate', dup.failed, (await conn.query('SELECT COUNT(*) AS n FROM t_order WHERE order_id = ?', [one.insertId]))[0].n);
  out('syntax', (await settle(conn.query('SELEC 1'))).failed);

  // A large result streamed.
  let rows = 0;
  let qty = 0;
  let ordered = true;
  let prev = -1;
  const stream = conn.queryStream('SELECT qty FROM t_order_item ORDER BY qty');
  for await (const row of stream) {
    rows++;
    qty += row.qty;
    ordered = ordered && row.qty >= prev;
    prev = row.qty;
  }
  out('stream', rows, qty, ordered);

  // Session state, reset and ping.
  await conn.query('SET @mark = 7');
  await conn.query("SET SESSION sql_mode = 'ANSI_QUOTES'");
  await conn.query("PREPARE ps_reset FROM 'SELECT 1'");
  out('before reset', (await conn.query('SELECT @mark AS m, @@sql_mode AS mode'))[0]);
  await conn.reset();
  out('after reset', (await conn.query('SELECT @mark AS m, @@sql_mode = @@GLOBAL.sql_mode AS mode'))[0], (await settle(conn.query('EXECUTE ps_reset'))).failed, (await conn.execute('SELECT COUNT(*) AS n FROM t_order WHERE user_id = ?', [1]))[0].n);
  await conn.ping();
  out('ping', true);

  // importFile: the statements of a file, pipelined.
  await conn.importFile({ file: path.join(__dirname, 'mariadb_import.sql') });
  out('imported', (await conn.query('SELECT status, amount FROM t_order WHERE user_id = 60 ORDER BY status')).map(r => [r.status, r.amount]));
  await conn.end();

  // A pool: connections taken and released, transactions on them.
  const pool = mariadb.createPool({ ...config, connectionLimit: 3 });
  const taken = await Promise.all([pool.getConnection(), pool.getConnection(), pool.getConnection()]);
  const counts = await Promise.all(taken.map((c, i) => c.query('SELECT COUNT(*) AS n FROM t_order WHERE user_id = ?', [20 + i])));
  out('pool', counts.map(r => r[0].n), pool.totalConnections(), pool.activeConnections());
  await taken[0].beginTransaction();
  await taken[0].query('INSERT INTO t_order (user_id, status) VALUES (70, ?)', ['pooled']);
  await taken[0].rollback();
  taken.forEach(c => c.release());
  out('pool query', (await pool.query('SELECT COUNT(*) AS n FROM t_order WHERE user_id = 70'))[0].n, affected(await pool.batch('INSERT INTO t_order (user_id, status) VALUES (?, ?)', [[71, 'x'], [72, 'y']])));
  const again = await pool.getConnection();
  out('pool again', (await again.execute('SELECT status FROM t_order WHERE user_id = ?', [72])).map(r => r.status));
  again.release();
  await pool.end();
})().catch(e => { console.error('FAILED', e.message, e.sql || ''); process.exit(1); });
