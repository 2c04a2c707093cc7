// A small MikroORM application (@mikro-orm/mysql, mysql2 driver), run by
// TestMikroORMApplication through the proxy and against one MariaDB, as
// MikroORM's getting-started guide writes one: entities Author 1-n Book
// (an EntitySchema each, on the binding tables t_order and
// t_order_item), the schema generator (create, a column dropped behind
// its back, the update that adds it back), persistAndFlush of authors
// with their books (one transaction, batched INSERTs, keys from
// insertId), find with populate (joined, MikroORM 6's default),
// limit/offset and findAndCount with and without populate, orderBy on
// several columns and on a relation, a QueryBuilder join with
// groupBy/count, updates and removals through the unit of work, a
// transactional() that throws, optimistic locking with a version
// property, and the Migrator creating and running a migration. It prints
// one line per step; both runs must print the same. Keys are not
// printed: the proxy's and MariaDB's differ.
const fs = require('fs');
const path = require('path');
const { MikroORM, EntitySchema, Collection, OptimisticLockError, LockMode, MySqlDriver, raw } = require('@mikro-orm/mysql');
const { Migrator } = require('@mikro-orm/migrations');
const [host, port, user, password, dbName] = process.argv.slice(2);

class Author {
  constructor(name, userId) {
    this.name = name;
    this.userId = userId;
    this.books = new Collection(this);
  }
}
class Book {
  constructor(title, author, qty) {
    this.title = title;
    this.author = author;
    this.userId = author.userId; // the binding tables' database sharding column
    this.qty = qty;
  }
}
const authorSchema = new EntitySchema({
  class: Author,
  tableName: 't_order',
  properties: {
    id: { type: 'number', columnType: 'bigint', primary: true, fieldName: 'order_id' },
    userId: { type: 'number', fieldName: 'user_id' },
    name: { type: 'string', length: 40 },
    born: { type: 'number', nullable: true },
    version: { type: 'number', version: true },
    books: { kind: '1:m', entity: () => Book, mappedBy: 'author', orphanRemoval: true },
  },
});
const bookSchema = new EntitySchema({
  class: Book,
  tableName: 't_order_item',
  properties: {
    id: { type: 'number', columnType: 'bigint', primary: true, fieldName: 'item_id' },
    author: { kind: 'm:1', entity: () => Author, fieldName: 'order_id', columnType: 'bigint' },
    userId: { type: 'number', fieldName: 'user_id' },
    title: { type: 'string', length: 60 },
    qty: { type: 'number', default: 1 },
    price: { type: 'decimal', precision: 8, scale: 2, nullable: true },
  },
});
// Note is a table without rules, created by the migration.
class Note {}
const noteSchema = new EntitySchema({
  class: Note,
  tableName: 't_note',
  properties: {
    id: { type: 'number', primary: true },
    body: { type: 'string', length: 100 },
  },
});

(async () => {
  const out = (...a) => console.log(a.map(x => JSON.stringify(x)).join(' '));
  // The migrations' directory is in node_modules, where the generated
  // file finds @mikro-orm/migrations.
  const migrations = fs.mkdtempSync(path.join(__dirname, 'node_modules', '.migrations-'));
  const orm = await MikroORM.init({
    driver: MySqlDriver, host, port: +port, user, password, dbName,
    entities: [authorSchema, bookSchema, noteSchema],
    extensions: [Migrator],
    // The application's tables only: a database shared with others
    // (through the proxy, other tests' tables) is not the schema's to drop
    // (the Migrator's snapshot would keep the tables skipTables skips).
    migrations: { path: migrations, emit: 'js', silent: true, snapshot: false },
    schemaGenerator: { skipTables: [/^(?!(t_order|t_order_item|t_note)$)/] },
    debug: process.env.MIKROORM_DEBUG === '1',
  });
  try {
    await orm.schema.dropSchema({ dropMigrationsTable: true });
    // The schema generator, on the entities without Note (the migration
    // adds it below).
    const create = await orm.schema.getCreateSchemaSQL();
    out('create schema sql', create.split('\n').filter(l => /^create table|^alter table/.test(l)).map(l => l.replace(/`t_note`.*/, 't_note')).filter(l => l !== 't_note' && !l.includes('t_note')));
    await orm.schema.createSchema();
    await orm.em.getConnection().execute('drop table t_note');
    await orm.em.getConnection().execute('alter table t_order_item drop column price');
    const update = await orm.schema.getUpdateSchemaSQL({ wrap: false });
    out('update schema sql', update.split('\n').filter(l => l && !l.includes('t_note')));
    await orm.em.getConnection().execute((await orm.schema.getUpdateSchemaSQL({ wrap: false })).split('\n').filter(l => l && !l.includes('t_note')).join('\n') || 'select 1');
    out('updated schema', (await orm.schema.getUpdateSchemaSQL({ wrap: false })).split('\n').filter(l => l && !l.includes('t_note')));

    // persistAndFlush: one transaction, the authors' INSERT batched, the
    // books' too, their foreign key from the authors' keys.
    let em = orm.em.fork();
    const a1 = new Author('Tolkien', 1);
    const a2 = new Author('Pratchett', 2);
    const a3 = new Author('Le Guin', 3);
    a1.books.add(new Book('The Hobbit', a1, 3), new Book('The Silmarillion', a1, 1), new Book('Unfinished Tales', a1, 2));
    a2.books.add(new Book('Mort', a2, 5), new Book('Guards! Guards!', a2, 2));
    a3.books.add(new Book('Earthsea', a3, 4));
    await em.persistAndFlush([a1, a2, a3]);
    out('persisted', [a1, a2, a3].map(a => [a.name, Number.isSafeInteger(Number(a.id)) && Number(a.id) > 0, a.version, a.books.getItems().map(b => b.author.id === a.id)]));
    const ids = { a1: a1.id, a2: a2.id, a3: a3.id };

    // find with populate (a LEFT JOIN with MikroORM 6's joined strategy),
    // and with the select-in strategy.
    em = orm.em.fork();
    let authors = await em.find(Author, {}, { populate: ['books'], orderBy: { name: 'asc', books: { title: 'asc' } } });
    out('populate joined', authors.map(a => [a.name, a.books.getItems().map(b => b.title)]));
    em = orm.em.fork();
    authors = await em.find(Author, { userId: { $in: [1, 2] } }, { populate: ['books'], strategy: 'select-in', orderBy: { name: 'desc' } });
    out('populate select-in', authors.map(a => [a.name, a.books.getItems().map(b => b.title).sort()]));
    em = orm.em.fork();
    const one = await em.findOneOrFail(Author, { id: ids.a2, userId: 2 }, { populate: ['books'] });
    out('findOne', one.name, one.books.length);

    // Paging: limit/offset, findAndCount, with a populated collection.
    em = orm.em.fork();
    const more = [];
    for (let i = 0; i < 12; i++) {
      const a = new Author('Author ' + String(i).padStart(2, '0'), 10 + (i % 4));
      a.books.add(new Book('Book ' + i, a, i));
      more.push(a);
    }
    await em.persistAndFlush(more);
    em = orm.em.fork();
    const page = await em.find(Author, { userId: { $in: [10, 11, 12, 13] } }, { orderBy: { name: 'desc' }, limit: 3, offset: 2 });
    out('limit offset', page.map(a => a.name));
    const [rows, count] = await em.findAndCount(Author, { name: { $like: 'Author%' } }, { orderBy: { userId: 'asc', name: 'asc' }, limit: 4, offset: 5 });
    out('findAndCount', count, rows.map(a => [a.userId, a.name]));
    em = orm.em.fork();
    const [prows, pcount] = await em.findAndCount(Author, {}, { populate: ['books'], orderBy: { name: 'asc' }, limit: 3, offset: 1 });
    out('findAndCount populate', pcount, prows.map(a => [a.name, a.books.getItems().map(b => b.title).sort()]));

    // orderBy on several columns, one of them the relation's.
    em = orm.em.fork();
    const books = await em.find(Book, { qty: { $gte: 2 } }, { orderBy: { author: { name: 'asc' }, qty: 'desc', title: 'asc' }, limit: 5 });
    out('orderBy', books.map(b => [b.title, b.qty]));

    // QueryBuilder: a join with groupBy and count.
    em = orm.em.fork();
    const grouped = await em.createQueryBuilder(Author, 'a')
      .select(['a.name', raw('count(b.item_id) as n'), raw('sum(b.qty) as total')])
      .leftJoin('a.books', 'b')
      .where({ userId: { $in: [1, 2, 3] } })
      .groupBy('a.id')
      .orderBy({ name: 'asc' })
      .execute();
    out('qb groupBy', grouped.map(r => [r.name, Number(r.n), Number(r.total)]));
    const counted = await em.createQueryBuilder(Book, 'b').join('b.author', 'a').where({ 'a.name': { $like: 'Author%' } }).getCount();
    out('qb count', counted);

    // Updates and removals through the unit of work.
    em = orm.em.fork();
    const tolkien = await em.findOneOrFail(Author, { id: ids.a1 }, { populate: ['books'] });
    tolkien.born = 1892;
    tolkien.books.getItems().find(b => b.title === 'The Hobbit').qty = 10;
    em.remove(tolkien.books.getItems().find(b => b.title === 'Unfinished Tales'));
    const pages = await em.find(Author, { name: { $in: ['Author 00', 'Author 01'] } }, { populate: ['books'] });
    for (const a of pages) em.remove(a);
    await em.flush();
    em = orm.em.fork();
    const again = await em.findOneOrFail(Author, { id: ids.a1 }, { populate: ['books'], orderBy: { books: { title: 'asc' } } });
    out('updated', again.born, again.version, again.books.getItems().map(b => [b.title, b.qty]), await em.count(Author), await em.count(Book));
    const n = await em.nativeUpdate(Book, { author: ids.a2 }, { price: 9.5 });
    out('nativeUpdate', n, (await em.find(Book, { price: 9.5 }, { orderBy: { title: 'asc' } })).map(b => [b.title, b.price]));

    // A transaction that throws: its INSERTs and UPDATE are rolled back.
    try {
      await orm.em.fork().transactional(async tem => {
        const a = new Author('Doomed', 4);
        a.books.add(new Book('Never', a, 1));
        tem.persist(a);
        const p = await tem.findOneOrFail(Author, { id: ids.a3 });
        p.name = 'Renamed';
        await tem.flush();
        throw new Error('give up');
      });
    } catch (e) {
      out('transaction threw', e.message);
    }
    em = orm.em.fork();
    out('rolled back', await em.count(Author, { name: 'Doomed' }), await em.count(Book, { title: 'Never' }), (await em.findOneOrFail(Author, { id: ids.a3 })).name);

    // Optimistic locking: two forks load the same author; the second
    // flush finds the version changed.
    const e1 = orm.em.fork();
    const e2 = orm.em.fork();
    const x1 = await e1.findOneOrFail(Author, { id: ids.a2 });
    const x2 = await e2.findOneOrFail(Author, { id: ids.a2 });
    x1.name = 'Pratchett T.';
    await e1.flush();
    x2.name = 'Terry Pratchett';
    try {
      await e2.flush();
      out('optimistic lock', 'no error');
    } catch (e) {
      out('optimistic lock', e instanceof OptimisticLockError, x1.version);
    }
    try {
      await orm.em.fork().findOneOrFail(Author, { id: ids.a2 }, { lockMode: LockMode.OPTIMISTIC, lockVersion: 1 });
      out('lock version', 'no error');
    } catch (e) {
      out('lock version', e instanceof OptimisticLockError);
    }

    // The Migrator: a migration for what the schema lacks (t_note), run
    // once; a second run has nothing to do.
    const migrator = orm.getMigrator();
    const created = await migrator.createMigration();
    out('migration created', created.diff.up.filter(s => s), created.diff.down.filter(s => s));
    out('pending', (await migrator.getPendingMigrations()).length);
    const ran = await migrator.up();
    out('migrated', ran.length, (await migrator.getExecutedMigrations()).length, (await migrator.getPendingMigrations()).length);
    em = orm.em.fork();
    const note = em.create(Note, { body: 'hello' });
    await em.flush();
    out('note', Number.isSafeInteger(Number(note.id)), (await em.fork().find(Note, {})).map(x => x.body));
    out('migration check', (await migrator.checkMigrationNeeded()));
    const down = await migrator.down();
    out('migrated down', down.length, await orm.schema.getUpdateSchemaSQL({ wrap: false }).then(s => s.split('\n').filter(l => l).length > 0));
  } finally {
    await orm.close(true);
    fs.rmSync(migrations, { recursive: true, force: true });
  }
})().catch(e => { console.error('FAILED', e.code || '', e.errno || '', e.message, e.sql || ''); process.exit(1); });
