// A small application on mysqljs (the classic `mysql` driver, 2.x, with
// its defaults: values escaped into the text with ? and ??, insertId a
// JavaScript Number, DECIMAL as strings, DATETIME as Date), run by
// TestMysqljsApplication through the proxy and against one MariaDB:
// tables created, inserts without keys (one row, a multi-row
// VALUES ? with nested arrays, SET ?), selects by key, ranges, pages and
// aggregates, transactions committed and rolled back, a duplicate key,
// a streamed result, changeUser, and a pool. It prints one line per step;
// both runs must print the same. Keys are not printed: the proxy's and
// MariaDB's differ.
const mysql = require('mysql');
const [host, port, user, password, database] = process.argv.slice(2);
const config = { host, port: +port, user, password, database };

const out = (...a) => console.log(a.map(x => JSON.stringify(x)).join(' '));
// failure is what an error tells an application, with the keys it may
// quote masked.
const failure = e => [e.code, e.errno, e.sqlState, (e.sqlMessage || '').replace(/'\d+'/g, "'N'"), e.fatal];

const conn = mysql.createConnection(config);
const query = (c, sql, values) => new Promise((resolve, reject) =>
  c.query(sql, values, (err, rows) => err ? reject(err) : resolve(rows)));
const q = (sql, values) => query(conn, sql, values);
const settle = p => p.then(r => r, e => ({ failed: failure(e) }));
const call = (c, method, ...args) => new Promise((resolve, reject) =>
  c[method](...args, err => err ? reject(err) : resolve()));

(async () => {
  await call(conn, 'connect');
  out('connected', (await q('SELECT DATABASE() AS db, @@autocommit AS ac, @@character_set_client AS cs'))[0].ac);
  await q('DROP TABLE IF EXISTS ??', ['t_order_item']);
  await q('DROP TABLE IF EXISTS ??', ['t_order']);
  await q('CREATE TABLE t_order (order_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(16), amount DECIMAL(10,2), created DATETIME)');
  await q('CREATE TABLE t_order_item (item_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, order_id BIGINT NOT NULL, user_id INT NOT NULL, qty INT)');

  // Inserts without keys: one row, SET ?, a multi-row VALUES ?.
  const one = await q('INSERT INTO t_order (user_id, status, amount, created) VALUES (?, ?, ?, ?)', [1, "it's NEW", 12.5, new Date(2024, 0, 2, 3, 4, 5)]);
  out('insert', one.affectedRows, typeof one.insertId, Number.isSafeInteger(one.insertId) && one.insertId > 0, one.warningCount);
  const byKey = await q('SELECT ?? FROM ?? WHERE ?? = ?', [['user_id', 'status', 'amount', 'created'], 't_order', 'order_id', one.insertId]);
  out('by key', byKey.map(r => [r.user_id, r.status, r.amount, r.created instanceof Date && r.created.getHours()]));
  const set = await q('INSERT INTO t_order SET ?', { user_id: 2, status: 'set', amount: 3 });
  out('insert set', set.affectedRows, set.insertId !== one.insertId);
  const rows = Array.from({ length: 40 }, (_, i) => [10 + (i % 4), 's' + String(i).padStart(2, '0'), i * 1.25]);
  const many = await q('INSERT INTO t_order (user_id, status, amount) VALUES ?', [rows]);
  // Not order_id >= insertId: a range on an INLINE sharding column is
  // refused (1235) unless allow-range-query-with-inline-sharding (README).
  const keys = (await q("SELECT order_id FROM t_order WHERE user_id IN (10, 11, 12, 13) AND status LIKE 's%' ORDER BY order_id")).map(r => r.order_id);
  out('multi-row insert', many.affectedRows, many.message, keys.length, keys[0] === many.insertId, keys[39] === many.insertId + 39);
  const items = Array.from({ length: 300 }, (_, i) => [one.insertId, 40 + (i % 7), i % 50]);
  out('items', (await q('INSERT INTO t_order_item (order_id, user_id, qty) VALUES ?', [items])).affectedRows);

  // Ranges, ordering, pages and aggregates.
  out('range', (await q('SELECT status FROM t_order WHERE amount BETWEEN ? AND ? ORDER BY amount DESC', [10, 20])).map(r => r.status));
  out('in', (await q('SELECT status FROM t_order WHERE user_id IN (?) ORDER BY status LIMIT 4', [[1, 2]])).map(r => r.status));
  out('page', (await q('SELECT status, amount FROM t_order WHERE user_id IN (10, 11, 12, 13) ORDER BY status DESC LIMIT ? OFFSET ?', [5, 10])).map(r => [r.status, r.amount]));
  out('aggregate', await q('SELECT COUNT(*) AS n, SUM(amount) AS s, AVG(amount) AS a, MIN(status) AS lo, MAX(amount) AS hi FROM t_order'));
  out('group by', await q('SELECT user_id, COUNT(*) AS n, SUM(qty) AS q FROM t_order_item GROUP BY user_id HAVING SUM(qty) > ? ORDER BY q DESC, user_id', [1050]));
  out('nest tables', (await new Promise((resolve, reject) => conn.query({ sql: 'SELECT o.status, o.amount FROM t_order o WHERE o.user_id IN (1, 2) ORDER BY o.status', nestTables: true }, (err, r) => err ? reject(err) : resolve(r)))));
  out('escape', mysql.format('SELECT ?? FROM t WHERE a = ? AND b IN (?)', ['x.y', "o'k", [1, 'two']]), (await q('SELECT ? AS v', ["back\\slash 'quote' \"dq\""]))[0].v);

  // Transactions: committed, rolled back, and a duplicate key.
  await call(conn, 'beginTransaction');
  await q('INSERT INTO t_order (user_id, status) VALUES (50, ?)', ['kept']);
  await q('UPDATE t_order SET status = ? WHERE order_id = ?', ['PAID', one.insertId]);
  await call(conn, 'commit');
  await call(conn, 'beginTransaction');
  await q('INSERT INTO t_order (user_id, status) VALUES (51, ?)', ['gone']);
  await q('DELETE FROM t_order WHERE user_id = 50');
  await call(conn, 'rollback');
  out('transactions', (await q('SELECT user_id, status FROM t_order WHERE user_id IN (50, 51) OR order_id = ? ORDER BY user_id', [one.insertId])).map(r => [r.user_id, r.status]));
  const dup = await settle(q('INSERT INTO t_order (order_id, user_id, status) VALUES (?, 1, ?)', [one.insertId, 'again']));
  out('duplicate', dup.failed, (await q('SELECT COUNT(*) AS n FROM t_order WHERE order_id = ?', [one.insertId]))[0].n);
  out('syntax', (await settle(q('SELEC 1'))).failed);
  out('unknown column', (await settle(q('SELECT nosuch FROM t_order'))).failed);
  await call(conn, 'beginTransaction');
  await q('INSERT INTO t_order (user_id, status) VALUES (52, ?)', ['before']);
  const inTx = await settle(q('INSERT INTO t_order (order_id, user_id, status) VALUES (?, 1, ?)', [one.insertId, 'dup in tx']));
  await call(conn, 'commit');
  out('duplicate in transaction', inTx.failed[0], (await q('SELECT status FROM t_order WHERE user_id = 52'))[0].status);

  // Queries queued without waiting: mysqljs sends them one after another.
  const queued = [];
  for (let i = 0; i < 60; i++) {
    queued.push(settle(i === 30 ? q('SELECT nosuch FROM t_order') : i % 2 ? q('SELECT COUNT(*) AS n FROM t_order WHERE user_id = ?', [60 + (i % 3)]) : q('INSERT INTO t_order (user_id, status) VALUES (?, ?)', [60 + (i % 3), 'q' + i])));
  }
  out('queued', (await Promise.all(queued)).map(r => r.failed ? r.failed[0] : Array.isArray(r) ? r[0].n : r.affectedRows).join(','));

  // A large result streamed.
  const streamed = await new Promise((resolve, reject) => {
    let n = 0;
    let qty = 0;
    conn.query('SELECT qty FROM t_order_item ORDER BY qty, item_id').stream({ highWaterMark: 16 })
      .on('data', r => { n++; qty += r.qty; })
      .on('error', reject)
      .on('end', () => resolve([n, qty]));
  });
  out('stream', streamed);
  let events = 0;
  await new Promise((resolve, reject) => conn.query('SELECT status FROM t_order WHERE user_id IN (10, 11) ORDER BY status')
    .on('result', () => { events++; })
    .on('error', reject)
    .on('end', resolve));
  out('row events', events);

  // changeUser: the session starts again (its variables go).
  await q('SET @mark = 7');
  await call(conn, 'changeUser', { user, password, database });
  out('changed user', (await q('SELECT @mark AS m, DATABASE() AS db'))[0].m, (await q('SELECT COUNT(*) AS n FROM t_order WHERE user_id = 1'))[0].n);
  const badChange = await new Promise(resolve => conn.changeUser({ user, password: password + 'x', database }, err => resolve(err ? [err.code, err.errno, err.fatal] : null)));
  out('change user refused', badChange, await settle(q('SELECT 1 AS one')));
  await new Promise(resolve => conn.end(() => resolve()));

  // A pool: connections taken and released.
  const pool = mysql.createPool({ ...config, connectionLimit: 3 });
  const getConn = () => new Promise((resolve, reject) => pool.getConnection((err, c) => err ? reject(err) : resolve(c)));
  const taken = await Promise.all([getConn(), getConn(), getConn()]);
  out('pool', (await Promise.all(taken.map((c, i) => query(c, 'SELECT COUNT(*) AS n FROM t_order WHERE user_id = ?', [10 + i])))).map(r => r[0].n));
  await call(taken[0], 'beginTransaction');
  await query(taken[0], 'INSERT INTO t_order (user_id, status) VALUES (70, ?)', ['pooled']);
  await call(taken[0], 'rollback');
  taken.forEach(c => c.release());
  const again = await getConn();
  out('pool again', (await query(again, 'SELECT COUNT(*) AS n FROM t_order WHERE user_id = 70'))[0].n, (await query(again, 'INSERT INTO t_order (user_id, status) VALUES ?', [[[71, 'x'], [72, 'y']]])).affectedRows);
  again.release();
  out('pool query', (await query(pool, 'SELECT status FROM t_order WHERE user_id IN (?) ORDER BY status', [[71, 72]])).map(r => r.status));
  await new Promise(resolve => pool.end(() => resolve()));
})().catch(e => { console.error('FAILED', e.code, e.sqlMessage || e.message, e.sql || ''); process.exit(1); });
