// The Knex application's migration: the binding tables (keys filled in by
// the proxy, AUTO_INCREMENT on one MariaDB) and an unsharded table.
exports.up = async knex => {
  await knex.schema.createTable('t_order', t => {
    t.bigIncrements('order_id');
    t.integer('user_id').notNullable();
    t.string('status', 20);
  });
  await knex.schema.createTable('t_order_item', t => {
    t.bigIncrements('item_id');
    t.bigInteger('order_id').notNullable();
    t.integer('user_id').notNullable();
    t.integer('qty');
  });
  await knex.schema.createTable('k_note', t => {
    t.increments('id');
    t.string('body', 100).notNullable().defaultTo('empty');
    t.timestamps(true, true);
  });
};
exports.down = async knex => {
  await knex.schema.dropTable('k_note');
  await knex.schema.dropTable('t_order_item');
  await knex.schema.dropTable('t_order');
};
