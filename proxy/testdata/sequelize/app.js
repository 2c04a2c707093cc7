// A small Sequelize application (mysql2 driver), run by
// TestSequelizeApplication through the proxy and against one MariaDB:
// sync() creating the tables, a model with hasMany/belongsTo loaded with
// include, bulkCreate, findAndCountAll paging, includes with a limit
// (findAll, findAndCountAll, required: true), managed and nested transactions
// (savepoints) with a failing inner one, a rollback, save() of a row
// that writes every column, a grouped aggregate, an upsert. It
// prints one line per step; both runs must print the same. Keys are not
// printed: the proxy's and MariaDB's differ.
const { Sequelize, DataTypes, Op } = require('sequelize');
const [host, port, user, password, database] = process.argv.slice(2);
const s = new Sequelize(database, user, password, { host, port: +port, dialect: 'mysql', logging: false });
const Order = s.define('Order', {
  order_id: { type: DataTypes.BIGINT, primaryKey: true, autoIncrement: true },
  user_id: { type: DataTypes.INTEGER, allowNull: false },
  status: DataTypes.STRING(20),
}, { tableName: 't_order', timestamps: false });
const Item = s.define('Item', {
  item_id: { type: DataTypes.BIGINT, primaryKey: true, autoIncrement: true },
  order_id: { type: DataTypes.BIGINT, allowNull: false },
  user_id: { type: DataTypes.INTEGER, allowNull: false },
  qty: DataTypes.INTEGER,
}, { tableName: 't_order_item', timestamps: false });
Order.hasMany(Item, { foreignKey: 'order_id', sourceKey: 'order_id', constraints: false });
Item.belongsTo(Order, { foreignKey: 'order_id', targetKey: 'order_id', constraints: false });

(async () => {
  const out = (...a) => console.log(a.map(x => JSON.stringify(x)).join(' '));
  await s.sync({ force: true });
  out('synced', (await s.getQueryInterface().showAllTables()).filter(t => t.startsWith('t_order')).sort());

  const o = await Order.create({ user_id: 1, status: 'NEW' });
  out('created', o.user_id, o.status, Number.isSafeInteger(Number(o.order_id)) && Number(o.order_id) > 0);
  const items = await Item.bulkCreate([1, 2, 3].map(q => ({ order_id: o.order_id, user_id: 1, qty: q })));
  out('bulk items', items.length, new Set(items.map(i => String(i.item_id))).size);
  const eager = await Order.findOne({ where: { user_id: 1, order_id: o.order_id }, include: [Item], order: [[Item, 'qty', 'ASC']] });
  out('eager', eager.status, eager.Items.map(i => i.qty));

  await s.transaction(async t => {
    await Order.create({ user_id: 2, status: 'outer' }, { transaction: t });
    try {
      await s.transaction({ transaction: t }, async t2 => {
        await Order.create({ user_id: 3, status: 'inner' }, { transaction: t2 });
        throw new Error('inner fails');
      });
    } catch (e) { out('inner', e.message); }
    await Order.create({ user_id: 5, status: 'after' }, { transaction: t });
  });
  out('after nested', (await Order.findAll({ where: { user_id: [2, 3, 5] }, order: [['user_id', 'ASC']] })).map(r => [r.user_id, r.status]));

  const t = await s.transaction();
  await Order.create({ user_id: 4, status: 'gone' }, { transaction: t });
  await Item.create({ order_id: o.order_id, user_id: 7, qty: 9 }, { transaction: t });
  await t.rollback();
  out('rolled back', await Order.count({ where: { user_id: 4 } }), await Item.count({ where: { user_id: 7 } }));

  await Order.bulkCreate(Array.from({ length: 25 }, (_, i) => ({ user_id: 10 + (i % 4), status: 'b' + String(i).padStart(2, '0') })));
  const page = await Order.findAndCountAll({ where: { user_id: [10, 11, 12, 13] }, order: [['status', 'DESC']], limit: 5, offset: 10 });
  out('page', page.count, page.rows.map(r => r.status));
  // A hasMany include with a limit: the parents in a derived table with
  // the ORDER BY and LIMIT, their children joined to it.
  const parents = await Order.findAll({ include: [Item], order: [['order_id', 'ASC'], [Item, 'qty', 'ASC']], limit: 3 });
  const counted = await Order.findAndCountAll({ where: { user_id: [1, 2, 5] }, include: [Item], order: [['order_id', 'DESC']], limit: 2, offset: 1 });
  out('include limit', parents.map(r => [r.status, r.Items.map(i => i.qty)]), counted.count, counted.rows.map(r => [r.status, r.Items.length]));
  // required: true pages only the parents with a child, by a subquery
  // on the children correlated on the parent's key inside the derived
  // table, and INNER JOINs them.
  const after = await Order.findOne({ where: { user_id: 5 } });
  await Item.create({ order_id: after.order_id, user_id: 5, qty: 4 });
  const withItems = await Order.findAll({ include: [{ model: Item, required: true }], order: [['order_id', 'ASC'], [Item, 'qty', 'ASC']], limit: 1, offset: 1 });
  const countedWith = await Order.findAndCountAll({ where: { user_id: [1, 2, 5] }, include: [{ model: Item, required: true, where: { qty: { [Op.gt]: 1 } } }], order: [['order_id', 'DESC']], limit: 1, offset: 1 });
  out('include required', withItems.map(r => [r.status, r.Items.map(i => i.qty)]), countedWith.count, countedWith.rows.map(r => [r.status, r.Items.map(i => i.qty).sort()]));

  eager.status = 'PAID';
  await eager.save();
  const [n] = await Order.update({ user_id: 1, status: 'PAID2' }, { where: { order_id: o.order_id } });
  out('updated', n, (await Order.findOne({ where: { order_id: o.order_id } })).status);

  const g = await Item.findAll({ attributes: ['order_id', [s.fn('SUM', s.col('qty')), 'total'], [s.fn('COUNT', s.col('item_id')), 'n']], where: { user_id: 1 }, group: ['order_id'], raw: true });
  out('grouped', g.map(r => [Number(r.total), Number(r.n)]));

  const [row] = await Order.upsert({ order_id: o.order_id, user_id: 1, status: 'UPSERTED' });
  out('upsert', row.status, (await Order.findOne({ where: { order_id: o.order_id } })).status);

  const destroyed = await Order.destroy({ where: { user_id: [10, 11] } });
  out('destroyed', destroyed, await Order.count());
  await s.close();
})().catch(e => { console.error('FAILED', e.original ? e.original.message : e.message, e.sql || ''); process.exit(1); });
