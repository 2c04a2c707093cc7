'use strict';
// TestMysql2ExtendedMetadata: prints what mysql2 makes of MariaDB's JSON,
// UUID, INET6 and INET4 columns and of a JSON_OBJECT() expression, which
// it tells from strings only by the extended column metadata
// (MARIADB_CLIENT_EXTENDED_METADATA): one line per query, run against
// MariaDB and through the proxy.
// Usage: node extmeta.js HOST PORT USER PASSWORD DATABASE
const mysql = require('mysql2/promise');

async function main() {
  const [host, port, user, password, database] = process.argv.slice(2);
  const conn = await mysql.createConnection({ host, port: Number(port), user, password, database });
  const queries = [
    ['query', "SELECT JSON_OBJECT('a', 1) AS o, JSON_ARRAY(1, 2) AS a"],
    ['query', 'SELECT id, j, u, ip, ip4, name FROM t_meta WHERE id = 3'],
    ['query', 'SELECT id, j, u, ip, ip4, name FROM t_meta ORDER BY id'],
    ['execute', 'SELECT id, j, u, name FROM t_meta WHERE id = ?', [3]],
    ['execute', 'SELECT id, j FROM t_meta WHERE id IN (?, ?, ?) ORDER BY id', [1, 2, 4]],
  ];
  for (const [how, sql, args] of queries) {
    const [rows, fields] = how === 'execute' ? await conn.execute(sql, args) : await conn.query(sql);
    const types = fields.map((f) => [f.name, f.extendedTypeName || null, f.extendedFormat || null]);
    console.log(JSON.stringify({ how, sql, rows, types }));
  }
  await conn.end();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
