<?php
// A small Doctrine DBAL application (Debian's php-doctrine-dbal), run by
// TestDoctrineApplication through the proxy over binding tables (t_order,
// t_order_item) and unsharded ones (doc_category, doc_product: the default
// data source), and directly on one MariaDB. It does what a Symfony
// application does through Doctrine: connect with DriverManager, build the
// schema with a Schema and migrateSchema (which introspects the database
// through information_schema first), check that the introspected schema
// has nothing left to migrate, migrate again with a new column, insert
// without ids (the proxy's Snowflake keys, MariaDB's AUTO_INCREMENT),
// query with the QueryBuilder, expand IN lists (ArrayParameterType), run
// transactions (committed, rolled back on an exception, nested with
// savepoints) and catch a UniqueConstraintViolationException. It prints one
// line per step; both runs must print the same. Generated keys are not
// printed, only that lastInsertId() finds its row.
//
// Usage: php doctrine_app.php driver host port user password database
// (driver: pdo_mysql or mysqli)

require_once 'Doctrine/DBAL/autoload.php';

use Doctrine\DBAL\ArrayParameterType;
use Doctrine\DBAL\Connection;
use Doctrine\DBAL\DriverManager;
use Doctrine\DBAL\Exception\UniqueConstraintViolationException;
use Doctrine\DBAL\ParameterType;
use Doctrine\DBAL\Schema\Schema;

[, $driver, $host, $port, $user, $password, $database] = $argv;

function out(string $step, $value): void
{
    echo $step, ' | ', is_string($value) ? $value : json_encode($value, JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES), "\n";
}

// step runs one step and prints its result, or the exception it threw:
// the connection must stay usable after it.
function step(string $name, callable $f): void
{
    try {
        out($name, $f());
    } catch (Throwable $e) {
        $driver = $e instanceof Doctrine\DBAL\Exception\DriverException ? ' ' . $e->getSQLState() . ' ' . $e->getCode() : '';
        out($name, 'error ' . get_class($e) . $driver . ' ' . message($e->getMessage()));
    }
}

// message is the exception's message with each run's own database name
// taken out.
function message(string $m): string
{
    global $database;
    return str_replace($database, 'DB', $m);
}

// wanted is the application's schema; $withNote adds the column of its
// second migration.
function wanted(bool $withNote): Schema
{
    $schema = new Schema();
    $order = $schema->createTable('t_order');
    $order->addColumn('order_id', 'bigint', ['autoincrement' => true]);
    $order->addColumn('user_id', 'integer');
    $order->addColumn('status', 'string', ['length' => 16, 'default' => 'new']);
    $order->addColumn('amount', 'decimal', ['precision' => 10, 'scale' => 2, 'notnull' => false]);
    $order->addColumn('created', 'datetime', ['notnull' => false]);
    if ($withNote) {
        $order->addColumn('note', 'string', ['length' => 64, 'notnull' => false]);
    }
    $order->setPrimaryKey(['order_id']);
    $order->addIndex(['user_id', 'status'], 'idx_order_user_status');

    $item = $schema->createTable('t_order_item');
    $item->addColumn('item_id', 'bigint', ['autoincrement' => true]);
    $item->addColumn('order_id', 'bigint');
    $item->addColumn('user_id', 'integer');
    $item->addColumn('qty', 'integer', ['default' => 1]);
    $item->setPrimaryKey(['item_id']);
    $item->addIndex(['order_id'], 'idx_item_order');
    $item->addForeignKeyConstraint('t_order', ['order_id'], ['order_id'], [], 'fk_item_order');

    $category = $schema->createTable('doc_category');
    $category->addColumn('id', 'integer', ['autoincrement' => true]);
    $category->addColumn('name', 'string', ['length' => 32]);
    $category->setPrimaryKey(['id']);
    $category->addUniqueIndex(['name'], 'uniq_category_name');

    $product = $schema->createTable('doc_product');
    $product->addColumn('id', 'integer', ['autoincrement' => true]);
    $product->addColumn('category_id', 'integer');
    $product->addColumn('sku', 'string', ['length' => 16]);
    $product->addColumn('price', 'decimal', ['precision' => 8, 'scale' => 2]);
    $product->setPrimaryKey(['id']);
    $product->addUniqueIndex(['sku'], 'uniq_product_sku');
    $product->addForeignKeyConstraint('doc_category', ['category_id'], ['id'], ['onDelete' => 'CASCADE'], 'fk_product_category');
    return $schema;
}

// describe prints what the SchemaManager introspects of a table: its
// columns, indexes and foreign keys.
function describe(Connection $conn, string $table): void
{
    $sm = $conn->createSchemaManager();
    $columns = [];
    foreach ($sm->listTableColumns($table) as $c) {
        $columns[] = sprintf(
            '%s %s%s%s%s%s',
            $c->getName(),
            get_class($c->getType()),
            $c->getLength() !== null ? '(' . $c->getLength() . ')' : '',
            $c->getNotnull() ? ' not null' : '',
            $c->getAutoincrement() ? ' autoincrement' : '',
            $c->getDefault() !== null ? ' default ' . $c->getDefault() : ''
        );
    }
    out("columns $table", $columns);
    $indexes = [];
    foreach ($sm->listTableIndexes($table) as $name => $i) {
        $indexes[] = sprintf('%s(%s)%s%s', $name, implode(',', $i->getColumns()), $i->isUnique() ? ' unique' : '', $i->isPrimary() ? ' primary' : '');
    }
    sort($indexes);
    out("indexes $table", $indexes);
    $fks = [];
    foreach ($sm->listTableForeignKeys($table) as $fk) {
        $fks[] = sprintf('%s(%s) -> %s(%s) on delete %s', $fk->getName(), implode(',', $fk->getLocalColumns()), $fk->getForeignTableName(), implode(',', $fk->getForeignColumns()), $fk->onDelete() ?? '-');
    }
    out("foreign keys $table", $fks);
}

$conn = DriverManager::getConnection([
    'driver' => $driver,
    'host' => $host,
    'port' => (int) $port,
    'user' => $user,
    'password' => $password,
    'dbname' => $database,
    'charset' => 'utf8mb4',
]);
$sm = $conn->createSchemaManager();

step('connect', fn () => [$conn->fetchOne('SELECT 1'), message($conn->getDatabase()), get_class($conn->getDatabasePlatform())]);
foreach (['t_order_item', 't_order', 'doc_product', 'doc_category'] as $t) {
    $conn->executeStatement("DROP TABLE IF EXISTS $t");
}
step('tables before', fn () => $sm->listTableNames());

// The schema, created as doctrine:schema:update does: introspect, compare,
// run the difference.
step('migration sql', function () use ($conn, $sm) {
    $diff = $sm->createComparator()->compareSchemas($sm->introspectSchema(), wanted(false));
    return $conn->getDatabasePlatform()->getAlterSchemaSQL($diff);
});
step('migrate', function () use ($sm) {
    $sm->migrateSchema(wanted(false));
    return 'ok';
});
step('tables', fn () => $sm->listTableNames());
step('tables exist', fn () => [$sm->tablesExist(['t_order', 't_order_item']), $sm->tablesExist(['t_missing'])]);
foreach (['t_order', 't_order_item', 'doc_category', 'doc_product'] as $t) {
    describe($conn, $t);
}
// doctrine:schema:validate: the introspected schema is the wanted one.
step('up to date', fn () => $conn->getDatabasePlatform()->getAlterSchemaSQL(
    $sm->createComparator()->compareSchemas($sm->introspectSchema(), wanted(false))
));
// A second migration adds a column to the sharded table.
step('second migration sql', fn () => $conn->getDatabasePlatform()->getAlterSchemaSQL(
    $sm->createComparator()->compareSchemas($sm->createSchema(), wanted(true))
));
step('second migrate', function () use ($sm) {
    $sm->migrateSchema(wanted(true));
    return 'ok';
});
step('columns after', fn () => array_keys($sm->listTableColumns('t_order')));

// Inserts without ids.
$orders = [];
step('insert orders', function () use ($conn, &$orders) {
    $n = 0;
    foreach ([1, 2, 3, 4] as $user) {
        foreach ([1, 2, 3] as $k) {
            $n += $conn->insert('t_order', [
                'user_id' => $user,
                'status' => $k === 3 ? 'paid' : 'new',
                'amount' => sprintf('%d.%02d', $user * 10 + $k, $k * 7),
                'created' => new DateTime(sprintf('2024-0%d-1%d 12:34:56', $user, $k)),
            ], ['created' => 'datetime']);
            $id = $conn->lastInsertId();
            $orders[$user][] = $id;
        }
    }
    return $n;
});
step('last insert id', function () use ($conn, &$orders) {
    $found = [];
    foreach ($orders as $user => $ids) {
        foreach ($ids as $id) {
            $found[] = $id > 0 ? $conn->fetchOne('SELECT amount FROM t_order WHERE order_id = ? AND user_id = ?', [$id, $user]) : 'no id';
        }
    }
    return $found;
});
step('insert items', function () use ($conn, &$orders) {
    $n = 0;
    foreach ($orders as $user => $ids) {
        foreach ($ids as $k => $id) {
            for ($q = 1; $q <= $k + 1; $q++) {
                $n += $conn->insert('t_order_item', ['order_id' => $id, 'user_id' => $user, 'qty' => $q * $user], ['order_id' => ParameterType::INTEGER, 'user_id' => ParameterType::INTEGER, 'qty' => ParameterType::INTEGER]);
            }
        }
    }
    return $n;
});
step('insert categories', function () use ($conn) {
    foreach (['books', 'games', 'music'] as $name) {
        $conn->insert('doc_category', ['name' => $name]);
    }
    $books = $conn->lastInsertId() - 2;
    $conn->insert('doc_product', ['category_id' => $books, 'sku' => 'B-1', 'price' => '9.99']);
    $conn->insert('doc_product', ['category_id' => $books + 1, 'sku' => 'G-1', 'price' => '59.00']);
    return $conn->fetchAllNumeric('SELECT c.name, p.sku, p.price FROM doc_product p JOIN doc_category c ON c.id = p.category_id ORDER BY p.sku');
});

// Reads.
step('by key', fn () => $conn->fetchAssociative('SELECT user_id, status, amount, created FROM t_order WHERE order_id = :id AND user_id = :user', ['id' => $orders[3][1], 'user' => 3]));
step('by user', fn () => $conn->fetchAllNumeric('SELECT amount, status FROM t_order WHERE user_id = ? ORDER BY amount', [2]));
step('query builder page', function () use ($conn) {
    $qb = $conn->createQueryBuilder();
    $qb->select('o.user_id', 'o.amount', 'o.status')
        ->from('t_order', 'o')
        ->where($qb->expr()->gt('o.amount', ':min'))
        ->andWhere('o.status = :status')
        ->orderBy('o.amount', 'DESC')
        ->addOrderBy('o.user_id')
        ->setFirstResult(2)
        ->setMaxResults(4)
        ->setParameter('min', '12')
        ->setParameter('status', 'new');
    return $qb->fetchAllAssociative();
});
step('query builder in', function () use ($conn) {
    $qb = $conn->createQueryBuilder();
    $qb->select('user_id', 'COUNT(*) AS n', 'SUM(amount) AS total', 'MIN(created) AS first')
        ->from('t_order')
        ->where($qb->expr()->in('user_id', ':users'))
        ->groupBy('user_id')
        ->having('COUNT(*) > 1')
        ->orderBy('total', 'DESC')
        ->setParameter('users', [1, 3, 4], ArrayParameterType::INTEGER);
    return $qb->executeQuery()->fetchAllAssociative();
});
step('aggregates', fn () => $conn->fetchAllNumeric('SELECT COUNT(*), SUM(amount), MAX(created), COUNT(DISTINCT user_id) FROM t_order'));
step('range', fn () => $conn->fetchFirstColumn('SELECT amount FROM t_order WHERE created BETWEEN ? AND ? ORDER BY created', ['2024-02-01', '2024-03-31']));
step('binding join', fn () => $conn->fetchAllNumeric(
    'SELECT o.amount, i.qty FROM t_order o JOIN t_order_item i ON i.order_id = o.order_id WHERE o.user_id = ? ORDER BY o.amount, i.qty',
    [4]
));
step('join counts', fn () => $conn->fetchAllKeyValue(
    'SELECT o.user_id, COUNT(i.item_id) FROM t_order o LEFT JOIN t_order_item i ON i.order_id = o.order_id GROUP BY o.user_id ORDER BY o.user_id'
));
step('update in list', fn () => $conn->executeStatement(
    'UPDATE t_order SET status = ?, note = ? WHERE user_id IN (?) AND amount > ?',
    ['shipped', 'by doctrine', [2, 3], '22'],
    [ParameterType::STRING, ParameterType::STRING, ArrayParameterType::INTEGER, ParameterType::STRING]
));
step('after update', fn () => $conn->fetchAllNumeric("SELECT user_id, amount, note FROM t_order WHERE status = 'shipped' ORDER BY amount"));
step('update builder', function () use ($conn) {
    return $conn->createQueryBuilder()
        ->update('t_order')
        ->set('status', ':status')
        ->where('user_id = :user')
        ->andWhere("status = 'paid'")
        ->setParameter('status', 'archived')
        ->setParameter('user', 1, ParameterType::INTEGER)
        ->executeStatement();
});
step('delete in list', fn () => $conn->executeStatement(
    'DELETE FROM t_order_item WHERE user_id = ? AND qty IN (?)',
    [4, [8, 12]],
    [ParameterType::INTEGER, ArrayParameterType::INTEGER]
));
step('strings in list', fn () => $conn->fetchAllNumeric(
    'SELECT status, COUNT(*) FROM t_order WHERE status IN (?) GROUP BY status ORDER BY status',
    [['new', 'archived', 'shipped']],
    [ArrayParameterType::STRING]
));

// Transactions.
step('transactional commit', function () use ($conn) {
    $conn->transactional(function (Connection $c) {
        $c->insert('t_order', ['user_id' => 5, 'status' => 'tx', 'amount' => '5.00']);
        $id = $c->lastInsertId();
        $c->insert('t_order_item', ['order_id' => $id, 'user_id' => 5, 'qty' => 50]);
        $c->update('t_order', ['amount' => '5.50'], ['order_id' => $id, 'user_id' => 5]);
    });
    return $conn->fetchAllNumeric('SELECT o.status, o.amount, i.qty FROM t_order o JOIN t_order_item i ON i.order_id = o.order_id WHERE o.user_id = 5');
});
step('transactional rollback', function () use ($conn) {
    try {
        $conn->transactional(function (Connection $c) {
            $c->insert('t_order', ['user_id' => 6, 'status' => 'tx', 'amount' => '6.00']);
            $c->delete('t_order_item', ['user_id' => 5]);
            $c->insert('doc_category', ['name' => 'rolled back']);
            throw new RuntimeException('changed my mind');
        });
    } catch (RuntimeException $e) {
        return [$e->getMessage(), $conn->isTransactionActive(),
            $conn->fetchOne('SELECT COUNT(*) FROM t_order WHERE user_id = 6'),
            $conn->fetchOne('SELECT COUNT(*) FROM t_order_item WHERE user_id = 5'),
            $conn->fetchOne('SELECT COUNT(*) FROM doc_category')];
    }
    return 'no exception';
});
step('nested savepoints', function () use ($conn) {
    $conn->setNestTransactionsWithSavepoints(true);
    $conn->beginTransaction();
    $conn->insert('t_order', ['user_id' => 7, 'status' => 'outer', 'amount' => '7.00']);
    $conn->beginTransaction();
    $conn->insert('t_order', ['user_id' => 8, 'status' => 'inner', 'amount' => '8.00']);
    $level = $conn->getTransactionNestingLevel();
    $conn->rollBack();
    $conn->beginTransaction();
    $conn->insert('t_order', ['user_id' => 7, 'status' => 'inner kept', 'amount' => '7.70']);
    $conn->commit();
    $conn->commit();
    return [$level, $conn->fetchAllNumeric('SELECT user_id, status, amount FROM t_order WHERE user_id IN (7, 8) ORDER BY amount')];
});

// Errors, and the connection after them.
step('duplicate unique', function () use ($conn) {
    try {
        $conn->insert('doc_category', ['name' => 'games']);
    } catch (UniqueConstraintViolationException $e) {
        return ['unique violation', $e->getSQLState(), $e->getCode(), message($e->getPrevious()->getMessage())];
    }
    return 'no exception';
});
step('duplicate primary', function () use ($conn) {
    $conn->insert('t_order', ['order_id' => 424242, 'user_id' => 9, 'status' => 'fixed']);
    try {
        $conn->insert('t_order', ['order_id' => 424242, 'user_id' => 9, 'status' => 'again']);
    } catch (UniqueConstraintViolationException $e) {
        return ['unique violation', $e->getSQLState(), $e->getCode(), message($e->getPrevious()->getMessage())];
    }
    return 'no exception';
});
step('duplicate in transaction', function () use ($conn) {
    try {
        $conn->transactional(function (Connection $c) {
            $c->insert('t_order', ['user_id' => 10, 'status' => 'lost']);
            $c->insert('t_order', ['order_id' => 424242, 'user_id' => 9, 'status' => 'again']);
        });
    } catch (UniqueConstraintViolationException $e) {
        return [$e->getCode(), $conn->isTransactionActive(), $conn->fetchOne('SELECT COUNT(*) FROM t_order WHERE user_id = 10')];
    }
    return 'no exception';
});
step('foreign key', fn () => $conn->insert('doc_product', ['category_id' => 999, 'sku' => 'X-1', 'price' => '1.00']));
step('missing table', fn () => $conn->fetchOne('SELECT COUNT(*) FROM t_missing'));
step('syntax', fn () => $conn->executeQuery('SELEC 1'));
step('after errors', fn () => [$conn->fetchOne('SELECT COUNT(*) FROM t_order'), $conn->fetchOne('SELECT COUNT(*) FROM t_order_item'), $conn->isTransactionActive()]);
step('cascade', function () use ($conn) {
    $conn->delete('doc_category', ['name' => 'books']);
    return $conn->fetchFirstColumn('SELECT sku FROM doc_product ORDER BY sku');
});
step('tables end', fn () => $sm->listTableNames());
