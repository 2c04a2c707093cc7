// A small Knex application (mysql2 driver), run by TestKnexApplication
// through the proxy and against one MariaDB: migrate:latest (its
// knex_migrations and knex_migrations_lock tables, the lock taken with
// SELECT ... FOR UPDATE in a transaction), the schema builder (hasTable,
// hasColumn, alterTable), insert/select/update/delete, transactions with
// a commit and a rollback, and offset/limit paging. It prints one line per
// step; both runs must print the same. Keys are not printed: the proxy's
// and MariaDB's differ.
const path = require('path');
const [host, port, user, password, database] = process.argv.slice(2);
const knex = require('knex')({ client: 'mysql2', connection: { host, port: +port, user, password, database }, pool: { min: 0, max: 2 } });
const migrations = { directory: path.join(__dirname, 'migrations') };

(async () => {
  const out = (...a) => console.log(a.map(x => JSON.stringify(x)).join(' '));
  const [batch, done] = await knex.migrate.latest(migrations);
  out('migrate', batch, done.map(f => path.basename(f)));
  out('migrate again', await knex.migrate.latest(migrations));
  out('migrations table', await knex('knex_migrations').select('name', 'batch'), await knex('knex_migrations_lock').select('is_locked'));
  out('has', await knex.schema.hasTable('t_order'), await knex.schema.hasTable('t_nothing'), await knex.schema.hasColumn('t_order', 'status'), await knex.schema.hasColumn('t_order', 'note'));
  await knex.schema.alterTable('t_order', t => { t.string('note', 30).nullable(); });
  out('altered', await knex.schema.hasColumn('t_order', 'note'));

  const [id] = await knex('t_order').insert({ user_id: 1, status: 'NEW' });
  out('inserted', Number.isSafeInteger(id) && id > 0);
  await knex('t_order_item').insert([1, 2, 3].map(q => ({ order_id: id, user_id: 1, qty: q })));
  out('items', await knex('t_order_item').where({ order_id: id, user_id: 1 }).orderBy('qty').pluck('qty'));
  out('join', await knex('t_order as o').join('t_order_item as i', 'o.order_id', 'i.order_id').where('o.user_id', 1).select('o.status', 'i.qty').orderBy('i.qty', 'desc'));
  await knex('k_note').insert({ body: 'hello' });
  out('note', await knex('k_note').select('id', 'body'));

  await knex('t_order').insert(Array.from({ length: 25 }, (_, i) => ({ user_id: 20 + (i % 4), status: 'b' + String(i).padStart(2, '0') })));
  out('page', await knex('t_order').whereIn('user_id', [20, 21, 22, 23]).orderBy('status', 'desc').offset(10).limit(5).pluck('status'));
  out('count', await knex('t_order').whereIn('user_id', [20, 21]).count({ n: '*' }), await knex('t_order_item').where('user_id', 1).sum({ s: 'qty' }).max({ m: 'qty' }));
  out('grouped', await knex('t_order').select('user_id').count({ n: '*' }).whereIn('user_id', [20, 21, 22, 23]).groupBy('user_id').orderBy('user_id'));

  out('column info', await knex('t_order').columnInfo());
  out('first', await knex('t_order').where('user_id', 1).first('status', 'note'));
  out('exists', await knex('t_order as o').whereExists(knex('t_order_item as i').whereRaw('i.order_id = o.order_id').where('i.user_id', 1)).where('o.user_id', 1).pluck('status'));
  out('distinct', await knex('t_order').whereIn('user_id', [20, 21, 22, 23]).countDistinct({ n: 'user_id' }));
  await knex('t_order_item').where({ order_id: id, user_id: 1 }).increment('qty', 10);
  out('increment', await knex('t_order_item').where({ order_id: id, user_id: 1 }).orderBy('qty').pluck('qty'));
  await knex('t_order').insert({ order_id: id, user_id: 1, status: 'UPSERT' }).onConflict('order_id').merge(['status']);
  out('upsert', await knex('t_order').where({ order_id: id }).pluck('status'));
  await knex.transaction(async trx => {
    await trx('t_order').insert({ user_id: 8, status: 'outer' });
    try {
      await trx.transaction(async t2 => {
        await t2('t_order').insert({ user_id: 9, status: 'inner' });
        throw new Error('inner fails');
      });
    } catch (e) { out('inner', e.message); }
    out('for update', await trx('t_order').where({ order_id: id }).forUpdate().pluck('status'));
  });
  out('after nested', await knex('t_order').whereIn('user_id', [8, 9]).orderBy('user_id').pluck('status'));
  await knex.schema.alterTable('t_order', t => { t.dropColumn('note'); t.index(['user_id'], 'idx_user'); });
  out('dropped', await knex.schema.hasColumn('t_order', 'note'));
  out('update', await knex('t_order').whereIn('user_id', [20, 21]).update({ status: 'upd' }));
  out('update by key', await knex('t_order').where({ order_id: id }).update({ status: 'PAID' }), await knex('t_order').where({ order_id: id }).first('status'));
  out('delete', await knex('t_order').whereIn('user_id', [22, 23]).del(), (await knex('t_order').count({ n: '*' }))[0]);

  try {
    await knex.transaction(async trx => {
      await trx('t_order').insert({ user_id: 4, status: 'gone' });
      await trx('t_order_item').insert({ order_id: id, user_id: 7, qty: 9 });
      throw new Error('give up');
    });
  } catch (e) { out('rolled back', e.message); }
  out('after rollback', (await knex('t_order').where('user_id', 4).count({ n: '*' }))[0], (await knex('t_order_item').where('user_id', 7).count({ n: '*' }))[0]);
  const trx = await knex.transaction();
  await trx('t_order').insert({ user_id: 5, status: 'kept' });
  await trx.rollback().catch(() => {});
  const trx2 = await knex.transaction();
  await trx2('t_order').insert({ user_id: 5, status: 'committed' });
  await trx2.commit();
  out('explicit', await knex('t_order').where('user_id', 5).pluck('status'));
  out('raw', (await knex.raw('SELECT COUNT(*) AS n FROM t_order WHERE user_id IN (?, ?)', [1, 5]))[0]);
  out('rollback migration', (await knex.migrate.rollback(migrations))[1].map(f => path.basename(f)), await knex.schema.hasTable('t_order'));
  await knex.destroy();
})().catch(e => { console.error('FAILED', e.message, e.sql || '', e.stack); process.exit(1); });
