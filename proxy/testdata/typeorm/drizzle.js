// A small Drizzle ORM application (drizzle-orm/mysql2), run by
// TestDrizzleApplication through the proxy and against one MariaDB:
// Drizzle's migrator (its __drizzle_migrations table, the migration run in
// a transaction), inserts with $returningId() (Drizzle numbers a multi-row
// INSERT's keys from insertId), selects with where/orderBy/limit/offset,
// joins of the binding tables, aggregates and groupBy, a relational query
// (mode "planetscale": a correlated subquery, as MariaDB has no LATERAL;
// its one() relations and ordered many() put the outer reference inside a
// derived table, which MariaDB refuses with 1054 on its own),
// onDuplicateKeyUpdate, update/delete, transactions with tx.rollback() and
// nested savepoints, prepared statements (.prepare() with sql.placeholder)
// and an error. It prints one line per step; both runs must print the
// same. Keys are compared by how they relate, not printed: the proxy's
// and MariaDB's differ.
const path = require('path');
const mysql = require('mysql2/promise');
const { drizzle } = require('drizzle-orm/mysql2');
const { migrate } = require('drizzle-orm/mysql2/migrator');
const { mysqlTable, bigint, int, varchar, decimal, datetime } = require('drizzle-orm/mysql-core');
const { eq, and, inArray, desc, asc, sql, count, sum, max, relations } = require('drizzle-orm');

const [host, port, user, password, database] = process.argv.slice(2);

const orders = mysqlTable('t_order', {
  orderId: bigint('order_id', { mode: 'number' }).autoincrement().primaryKey(),
  userId: int('user_id').notNull(),
  status: varchar('status', { length: 20 }),
});
const items = mysqlTable('t_order_item', {
  itemId: bigint('item_id', { mode: 'number' }).autoincrement().primaryKey(),
  orderId: bigint('order_id', { mode: 'number' }).notNull(),
  userId: int('user_id').notNull(),
  qty: int('qty'),
  price: decimal('price', { precision: 12, scale: 2 }),
  at: datetime('at', { mode: 'string', fsp: 6 }),
});
const notes = mysqlTable('d_note', {
  id: int('id').autoincrement().primaryKey(),
  body: varchar('body', { length: 100 }).notNull(),
});
const ordersRelations = relations(orders, ({ many }) => ({ items: many(items) }));
const itemsRelations = relations(items, ({ one }) => ({
  order: one(orders, { fields: [items.orderId], references: [orders.orderId] }),
}));

(async () => {
  const out = (...a) => console.log(a.map(x => JSON.stringify(x)).join(' '));
  const pool = mysql.createPool({ host, port: +port, user, password, database, connectionLimit: 2, supportBigNumbers: true });
  const db = drizzle(pool, { schema: { orders, items, notes, ordersRelations, itemsRelations }, mode: 'planetscale' });
  const migrationsFolder = path.join(__dirname, 'drizzle');

  await migrate(db, { migrationsFolder });
  await migrate(db, { migrationsFolder });
  const [applied] = await pool.query('SELECT hash, created_at FROM __drizzle_migrations');
  out('migrations', applied.length, applied.map(r => r.hash.length));

  const [{ orderId: id }] = await db.insert(orders).values({ userId: 1, status: 'NEW' }).$returningId();
  out('inserted', Number.isSafeInteger(id) && id > 0);
  const itemIds = await db.insert(items).values([1, 2, 3].map(q => ({ orderId: id, userId: 1, qty: q, price: (q * 1.25).toFixed(2), at: `2024-02-29 23:59:5${q}.12345${q}` }))).$returningId();
  const got = await db.select({ itemId: items.itemId }).from(items).where(eq(items.orderId, id)).orderBy(asc(items.itemId));
  out('returning ids', itemIds.length, JSON.stringify(itemIds.map(r => r.itemId)) === JSON.stringify(got.map(r => r.itemId)));
  out('items', await db.select({ qty: items.qty, price: items.price, at: items.at }).from(items).where(and(eq(items.orderId, id), eq(items.userId, 1))).orderBy(items.qty));
  out('join', await db.select({ status: orders.status, qty: items.qty }).from(orders).innerJoin(items, eq(orders.orderId, items.orderId)).where(eq(orders.userId, 1)).orderBy(desc(items.qty)));
  out('left join', await db.select({ status: orders.status, n: count(items.itemId) }).from(orders).leftJoin(items, eq(orders.orderId, items.orderId)).where(eq(orders.userId, 1)).groupBy(orders.orderId, orders.status));

  await db.insert(orders).values(Array.from({ length: 25 }, (_, i) => ({ userId: 20 + (i % 4), status: 'b' + String(i).padStart(2, '0') })));
  out('page', (await db.select({ s: orders.status }).from(orders).where(inArray(orders.userId, [20, 21, 22, 23])).orderBy(desc(orders.status)).limit(5).offset(10)).map(r => r.s));
  out('count', await db.select({ n: count() }).from(orders).where(inArray(orders.userId, [20, 21])), await db.$count(orders, inArray(orders.userId, [22, 23])));
  out('aggregates', await db.select({ s: sum(items.qty), m: max(items.price), p: sql`sum(${items.price})` }).from(items).where(eq(items.userId, 1)));
  out('grouped', await db.select({ userId: orders.userId, n: count() }).from(orders).where(inArray(orders.userId, [20, 21, 22, 23])).groupBy(orders.userId).orderBy(orders.userId));

  const rq = await db.query.orders.findMany({ where: eq(orders.userId, 1), columns: { status: true }, with: { items: { columns: { qty: true } } } });
  out('relational many', rq);
  await db.insert(orders).values({ orderId: id, userId: 1, status: 'UPSERT' }).onDuplicateKeyUpdate({ set: { status: sql`values(${orders.status})` } });
  out('upsert', await db.select({ s: orders.status }).from(orders).where(eq(orders.orderId, id)));

  const [upd] = await db.update(orders).set({ status: 'upd' }).where(inArray(orders.userId, [20, 21]));
  out('update', upd.affectedRows, upd.changedRows);
  const [del] = await db.delete(orders).where(inArray(orders.userId, [22, 23]));
  out('delete', del.affectedRows, await db.$count(orders));

  try {
    await db.transaction(async tx => {
      await tx.insert(orders).values({ userId: 8, status: 'rolled' });
      tx.rollback();
    });
  } catch (e) { out('rollback', e.constructor.name, e.message); }
  await db.transaction(async tx => {
    await tx.insert(orders).values({ userId: 8, status: 'outer' });
    try {
      await tx.transaction(async t2 => {
        await t2.insert(orders).values({ userId: 9, status: 'inner' });
        throw new Error('inner fails');
      });
    } catch (e) { out('inner', e.message); }
    out('for update', await tx.select({ s: orders.status }).from(orders).where(eq(orders.orderId, id)).for('update'));
  });
  out('after nested', (await db.select({ u: orders.userId, s: orders.status }).from(orders).where(inArray(orders.userId, [8, 9])).orderBy(orders.userId)).map(r => [r.u, r.s]));

  const byUser = db.select({ s: orders.status }).from(orders).where(eq(orders.userId, sql.placeholder('u'))).orderBy(orders.status).prepare();
  out('prepared', (await byUser.execute({ u: 20 })).map(r => r.s), (await byUser.execute({ u: 8 })).map(r => r.s));

  await db.insert(notes).values({ body: 'hello' });
  out('note', await db.select({ body: notes.body }).from(notes));

  try {
    await db.execute(sql`select nope from t_order where user_id = 1`);
  } catch (e) { out('error', e.cause?.code ?? e.code, e.cause?.errno ?? e.errno); }
  out('after error', await db.$count(orders, eq(orders.userId, 1)));
  await pool.end();
})().catch(e => { console.error(e); process.exit(1); });
