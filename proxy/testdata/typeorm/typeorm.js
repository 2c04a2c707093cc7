// A small TypeORM application (mysql2 driver), run by
// TestTypeORMApplication through the proxy and against one MariaDB:
// dropSchema and synchronize creating the tables (twice: the second run
// changes nothing; then after an entity change), dropSchema dropping a view,
// a foreign key between the binding tables (ON DELETE CASCADE), a
// migration, Repository save/insert/find/findAndCount paging, a
// QueryBuilder join of the binding tables, aggregates, update/delete by
// criteria, an upsert, managed, nested (savepoint) and QueryRunner
// transactions with rollbacks, and a raw query with parameters. It prints
// one line per step; both runs must print the same. Keys are not printed:
// the proxy's and MariaDB's differ.
const { DataSource, EntitySchema, In } = require('typeorm');
const [host, port, username, password, database] = process.argv.slice(2);

const Order = new EntitySchema({
  name: 'Order', tableName: 't_order',
  columns: {
    order_id: { type: 'bigint', primary: true, generated: 'increment' },
    user_id: { type: 'int' },
    status: { type: 'varchar', length: 20, nullable: true },
  },
  indices: [{ name: 'idx_order_user', columns: ['user_id'] }],
  relations: { items: { type: 'one-to-many', target: 'Item', inverseSide: 'order', cascade: ['insert'] } },
});
const Item = new EntitySchema({
  name: 'Item', tableName: 't_order_item',
  columns: {
    item_id: { type: 'bigint', primary: true, generated: 'increment' },
    order_id: { type: 'bigint' },
    user_id: { type: 'int' },
    qty: { type: 'int', nullable: true },
  },
  relations: { order: { type: 'many-to-one', target: 'Order', joinColumn: { name: 'order_id', referencedColumnName: 'order_id' }, onDelete: 'CASCADE' } },
});
const Note = new EntitySchema({
  name: 'Note', tableName: 't_note',
  columns: {
    id: { type: 'int', primary: true, generated: 'increment' },
    body: { type: 'varchar', length: 100, default: 'empty' },
    created: { type: 'datetime', createDate: true },
    updated: { type: 'datetime', updateDate: true },
    removed: { type: 'datetime', deleteDate: true, nullable: true },
    version: { type: 'int', version: true },
  },
});

class AddAudit1700000000000 {
  name = 'AddAudit1700000000000';
  async up(q) { await q.query('CREATE TABLE t_audit (id int NOT NULL AUTO_INCREMENT PRIMARY KEY, what varchar(50) NOT NULL)'); }
  async down(q) { await q.query('DROP TABLE t_audit'); }
}

const options = { type: 'mariadb', host, port: +port, username, password, database, entities: [Order, Item, Note], migrations: [AddAudit1700000000000], logging: false };

(async () => {
  const out = (...a) => console.log(a.map(x => JSON.stringify(x)).join(' '));
  const ds = new DataSource({ ...options, synchronize: true, dropSchema: true });
  await ds.initialize();
  out('synchronized', (await ds.createQueryRunner().getTables(['t_order', 't_order_item', 't_note'])).map(t => [t.name, t.columns.map(c => c.name)]).sort());
  const pending = await ds.driver.createSchemaBuilder().log();
  out('second synchronize', pending.upQueries.map(q => q.query));
  await ds.synchronize();
  out('migrations', (await ds.runMigrations()).map(m => m.name), (await ds.runMigrations()).length);
  await ds.query('INSERT INTO t_audit (what) VALUES (?)', ['migrated']);
  out('audit', await ds.query('SELECT what FROM t_audit'));

  const orders = ds.getRepository(Order), items = ds.getRepository(Item), notes = ds.getRepository(Note);
  const o = await orders.save({ user_id: 1, status: 'NEW' });
  out('saved', o.user_id, o.status, /^[1-9][0-9]*$/.test(String(o.order_id)));
  const its = await items.save([1, 2, 3].map(q => ({ order_id: o.order_id, user_id: 1, qty: q })));
  out('saved items', its.length, new Set(its.map(i => String(i.item_id))).size);
  const ins = await orders.insert([{ user_id: 10, status: 'i0' }, { user_id: 11, status: 'i1' }]);
  out('inserted', ins.identifiers.length, ins.identifiers.every(i => i.order_id !== undefined));
  const n = await notes.save({ body: 'hello' });
  out('note', n.id, n.body, (await notes.findOneBy({ id: n.id })).body);

  out('findOne', (await orders.findOne({ where: { order_id: o.order_id } })).status);
  out('find by user', (await orders.find({ where: { user_id: In([10, 11]) }, order: { status: 'ASC' } })).map(r => r.status));
  const withItems = await orders.findOne({ where: { user_id: 1, order_id: o.order_id }, relations: { items: true } });
  out('relations', withItems.items.map(i => i.qty).sort());

  await orders.save(Array.from({ length: 25 }, (_, i) => ({ user_id: 20 + (i % 4), status: 'b' + String(i).padStart(2, '0') })));
  const [page, total] = await orders.findAndCount({ where: { user_id: In([20, 21, 22, 23]) }, order: { status: 'DESC' }, skip: 10, take: 5 });
  out('page', total, page.map(r => r.status));

  const cascaded = await orders.save({ user_id: 1, status: 'CASCADE', items: [{ user_id: 1, qty: 40 }, { user_id: 1, qty: 41 }] });
  out('cascade', (await items.find({ where: { order_id: cascaded.order_id, user_id: 1 }, order: { qty: 'ASC' } })).map(i => i.qty));
  cascaded.status = 'RESAVED';
  await orders.save(cascaded);
  out('resave', (await orders.findOneBy({ order_id: cascaded.order_id })).status, await orders.existsBy({ order_id: cascaded.order_id }), await orders.existsBy({ user_id: 99 }));
  const extra = await orders.save({ user_id: 1, status: 'EXTRA', items: [{ user_id: 1, qty: 50 }] });
  await orders.delete({ order_id: extra.order_id, user_id: 1 });
  out('on delete cascade', await items.countBy({ order_id: extra.order_id }), await items.countBy({ user_id: 1 }));
  const [pageJoin, totalJoin] = await orders.findAndCount({ where: { user_id: 1 }, relations: { items: true }, order: { status: 'ASC' }, skip: 0, take: 1 });
  out('page with relations', totalJoin, pageJoin.map(r => [r.status, r.items.map(i => i.qty).sort()]));
  const [wide, wideTotal] = await orders.findAndCount({ where: { user_id: In([20, 21, 22, 23]) }, relations: { items: true }, order: { status: 'DESC' }, skip: 3, take: 4 });
  out('page with relations across shards', wideTotal, wide.map(r => [r.status, r.items.length]));
  out('stream', await new Promise((resolve, reject) => orders.createQueryBuilder('o').where('o.user_id IN (:...u)', { u: [20, 21] }).orderBy('o.status').stream().then(st => { const rows = []; st.on('data', r => rows.push(r.o_status)); st.on('end', () => resolve(rows)); st.on('error', reject); }, reject)));
  out('join count', await orders.createQueryBuilder('o').leftJoin('o.items', 'i').where('o.user_id = :u', { u: 1 }).getCount());
  n.body = 'edited';
  await notes.save(n);
  await notes.softDelete({ id: n.id });
  out('note versions', (await notes.findOne({ where: { id: n.id }, withDeleted: true })).version, await notes.count(), await notes.count({ withDeleted: true }));
  await notes.restore({ id: n.id });
  await notes.increment({ id: n.id }, 'version', 5);
  out('restored', (await notes.findOneBy({ id: n.id })).version);

  const joined = await orders.createQueryBuilder('o').innerJoinAndSelect('o.items', 'i')
    .where('o.user_id = :u', { u: 1 }).andWhere('i.qty IN (:...q)', { q: [1, 3] }).orderBy('i.qty', 'DESC').getMany();
  out('join', joined.map(r => [r.status, r.items.map(i => i.qty)]));
  const qb = await orders.createQueryBuilder('o').select(['o.status']).where('o.user_id IN (:...u)', { u: [20, 21] }).orderBy('o.status').limit(3).getMany();
  out('query builder', qb.map(r => r.status));

  const agg = await items.createQueryBuilder('i').select('COUNT(*)', 'n').addSelect('SUM(i.qty)', 'total').addSelect('MAX(i.qty)', 'mx').where('i.user_id = :u', { u: 1 }).getRawOne();
  out('aggregate', agg);
  out('repository aggregate', await items.count({ where: { user_id: 1 } }), await items.sum('qty', { user_id: 1 }), await items.maximum('qty', { user_id: 1 }));
  const grouped = await orders.createQueryBuilder('o').select('o.user_id', 'u').addSelect('COUNT(*)', 'n').where('o.user_id IN (:...u)', { u: [20, 21, 22, 23] }).groupBy('o.user_id').orderBy('o.user_id').getRawMany();
  out('grouped', grouped);

  const upd = await orders.update({ user_id: In([20, 21]) }, { status: 'upd' });
  out('update', upd.affected, await orders.countBy({ status: 'upd' }));
  await orders.update({ order_id: o.order_id }, { status: 'PAID' });
  out('update by key', (await orders.findOneBy({ order_id: o.order_id })).status);
  await orders.upsert({ order_id: o.order_id, user_id: 1, status: 'UPSERTED' }, ['order_id']);
  out('upsert', (await orders.findOneBy({ order_id: o.order_id })).status);
  const del = await orders.delete({ user_id: In([22, 23]) });
  out('delete', del.affected, await orders.count());

  await ds.transaction(async m => {
    await m.save(Order, { user_id: 2, status: 'outer' });
    try {
      await m.transaction(async m2 => {
        await m2.save(Order, { user_id: 3, status: 'inner' });
        throw new Error('inner fails');
      });
    } catch (e) { out('inner', e.message); }
    await m.save(Order, { user_id: 5, status: 'after' });
  });
  out('after nested', (await orders.find({ where: { user_id: In([2, 3, 5]) }, order: { user_id: 'ASC' } })).map(r => [r.user_id, r.status]));
  try {
    await ds.transaction(async m => {
      const doomed = await m.insert(Order, { user_id: 6, status: 'doomed' });
      await m.query('INSERT INTO t_order_item (order_id, user_id, qty) VALUES (?, ?, ?)', [doomed.identifiers[0].order_id, 6, 1]);
      await m.query('SELECT no_such_column FROM t_order WHERE user_id = ?', [6]);
    });
  } catch (e) { out('error in transaction', e.code, e.errno); }
  out('after error', await orders.countBy({ user_id: 6 }), await items.countBy({ user_id: 6 }));

  const qr = ds.createQueryRunner();
  await qr.connect();
  await qr.startTransaction();
  const gone = await qr.manager.save(Order, { user_id: 7, status: 'gone' });
  await qr.manager.save(Item, { order_id: gone.order_id, user_id: 7, qty: 9 });
  out('inside', await qr.manager.countBy(Order, { user_id: 7 }), await qr.manager.countBy(Item, { user_id: 7 }));
  out('locked', (await qr.manager.findOne(Order, { where: { order_id: o.order_id }, lock: { mode: 'pessimistic_write' } })).status);
  await qr.rollbackTransaction();
  await qr.startTransaction();
  await qr.manager.save(Order, { user_id: 4, status: 'kept' });
  await qr.commitTransaction();
  await qr.release();
  out('query runner', (await orders.findBy({ user_id: In([4, 7]) })).map(r => r.status), await items.countBy({ user_id: 7 }));

  out('raw', await ds.query('SELECT user_id, COUNT(*) AS n FROM t_order WHERE user_id IN (?, ?) GROUP BY user_id ORDER BY user_id', [1, 4]));
  await ds.undoLastMigration();
  out('undone', await ds.showMigrations(), (await ds.createQueryRunner().getTables(['t_audit'])).length);
  await ds.destroy();

  const again = new DataSource({ ...options, synchronize: true });
  await again.initialize();
  out('second run', (await again.driver.createSchemaBuilder().log()).upQueries.map(q => q.query), await again.getRepository(Order).count());
  await again.destroy();

  const Order2 = new EntitySchema({ ...Order.options, columns: { ...Order.options.columns, status: { type: 'varchar', length: 30, nullable: true }, note: { type: 'varchar', length: 30, default: 'none' } } });
  const changed = new DataSource({ ...options, entities: [Order2, Item, Note], synchronize: true });
  await changed.initialize();
  const t = await changed.createQueryRunner().getTable('t_order');
  const ti = await changed.createQueryRunner().getTable('t_order_item');
  out('foreign key', ti.foreignKeys.map(f => [f.columnNames, f.referencedTableName, f.referencedColumnNames, f.onDelete]));
  out('schema change', t.columns.map(c => [c.name, c.type, c.length, c.isNullable, c.default]), t.indices.map(i => [i.name, i.columnNames]));
  out('changed run', (await changed.driver.createSchemaBuilder().log()).upQueries.map(q => q.query));
  const changedOrders = changed.getRepository(Order2);
  out('new column', (await changedOrders.findOneBy({ order_id: o.order_id })).note);
  await changedOrders.createQueryBuilder().insert().values({ order_id: o.order_id, user_id: 1, status: 'x', note: 'or update' }).orUpdate(['note'], ['order_id']).execute();
  await changed.transaction(async m => {
    const r = await m.getRepository(Order2).createQueryBuilder('o').setLock('pessimistic_read').where('o.user_id IN (:...u)', { u: [1, 4] }).orderBy('o.note').addOrderBy('o.user_id').getMany();
    out('share lock', r.map(x => [x.status, x.note]));
  });
  await changed.query('CREATE VIEW v_note AS SELECT id, body FROM t_note');
  out('view', await changed.query('SELECT body FROM v_note'));
  await changed.destroy();

  const dropped = new DataSource({ ...options, dropSchema: true });
  await dropped.initialize();
  out('dropped schema', await dropped.query('SHOW FULL TABLES'));
  await dropped.destroy();
})().catch(e => { console.error('FAILED', e.message, e.query || '', e.stack); process.exit(1); });
