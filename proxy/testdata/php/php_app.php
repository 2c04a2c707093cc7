<?php
// A small PHP application, run by TestPHPApplication through the proxy and
// directly on one MariaDB holding an unsharded copy of the tables. It talks
// to the server as Laravel, Symfony and WordPress do: PDO_MySQL with its
// default emulated prepares (values quoted by the client), PDO with
// ATTR_EMULATE_PREPARES=false (server-side prepares, binary protocol), and
// mysqli (prepared statements with bind_param, send_long_data and
// get_result; text queries with real_escape_string). It prints one line per
// step; both runs must print the same. Generated keys are not printed (the
// proxy's Snowflake keys and MariaDB's AUTO_INCREMENT differ): what is
// printed is what an application relies on, that they are there, equal to
// LAST_INSERT_ID(), consecutive within a statement and find their rows.
//
// Usage: php php_app.php host port user password database

[, $host, $port, $user, $password, $database] = $argv;
$port = (int) $port;
$mode = 'setup';
mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);

// v shows a value with its PHP type, so that a column the server describes
// differently (signed for unsigned, other decimals) shows too.
function v($x): string
{
    if ($x === null) {
        return 'NULL';
    }
    if (is_int($x)) {
        return 'i' . $x;
    }
    if (is_float($x)) {
        return 'f' . var_export($x, true);
    }
    if (is_bool($x)) {
        return $x ? 'true' : 'false';
    }
    if (is_array($x)) {
        return '[' . implode(',', array_map('v', $x)) . ']';
    }
    if (preg_match('//u', $x) && !preg_match('/[\x00-\x1f\x7f]/', $x)) {
        return '"' . $x . '"';
    }
    if (strlen($x) > 24) {
        return 'bytes(' . strlen($x) . ',' . md5($x) . ')';
    }
    return 'x' . bin2hex($x);
}

function rows(array $rows): string
{
    return implode(' ', array_map('v', $rows));
}

// message is the server's message with each run's own database name taken out.
function message(string $m): string
{
    global $database;
    return str_replace($database . '.', 'DB.', $m);
}

function step(string $name, callable $body): void
{
    global $mode;
    try {
        $out = $body();
    } catch (PDOException $e) {
        $out = 'PDOException ' . $e->getCode() . ' ' . ($e->errorInfo[1] ?? '-') . ' ' . message($e->errorInfo[2] ?? $e->getMessage());
    } catch (mysqli_sql_exception $e) {
        $out = 'mysqli_sql_exception ' . $e->getCode() . ' ' . $e->getSqlState() . ' ' . message($e->getMessage());
    }
    echo $mode, ' | ', $name, ' | ', is_string($out) ? $out : v($out), "\n";
}

// The rows every mode stores, keyed given: one per data node and more, with
// the edge values of each type. user_id decides the data source, order_id
// the table.
function fixture(int $base): array
{
    return [
        [$base + 1, 0, 'new', '12345678901234.123456', '18446744073709551615', '2024-02-29 23:59:59.123456', 'héllo 😀 ✓', "\x00\x01\x00\xff'\"\\"],
        [$base + 2, 1, 'paid', '-0.000001', '18446744073709551614', '1970-01-01 00:00:01.000001', "it's \"q\" \\ back", "\x00"],
        [$base + 3, 2, null, null, null, null, null, null],
        [$base + 4, 3, 'paid', '0.500000', '9223372036854775808', '9999-12-31 23:59:59.999999', '', ''],
        [$base + 5, 5, 'NEW', '99999999999999.999999', '0', '2000-01-01 00:00:00.000000', 'Ünïcödé', str_repeat("\x00ab", 1000)],
        [$base + 6, 4, 'paid', '-99999999999999.999999', '9223372036854775807', '2000-01-01 00:00:00.000001', 'zz', "\\0\x00\\'"],
    ];
}

const COLUMNS = 'order_id, user_id, status, amount, big, created, note, payload';

// The scatter queries: sorted, paged and aggregated over every data node.
const SCATTER = [
    'order by big desc limit' => 'SELECT order_id, user_id, big FROM t_order ORDER BY big DESC LIMIT 4',
    'order by amount limit offset' => 'SELECT order_id, amount FROM t_order ORDER BY amount, order_id LIMIT 2, 3',
    'order by created desc' => 'SELECT order_id, created FROM t_order ORDER BY created DESC, order_id LIMIT 1, 4',
    'order by note' => 'SELECT order_id, note FROM t_order ORDER BY note, order_id',
    'order by payload' => 'SELECT order_id, payload FROM t_order ORDER BY payload, order_id LIMIT 5',
    'group by status' => 'SELECT status, COUNT(*), SUM(amount), MAX(big), MIN(created) FROM t_order GROUP BY status ORDER BY status',
    'aggregates' => 'SELECT COUNT(*), COUNT(big), SUM(big), AVG(amount), MAX(amount), MIN(big), MAX(note) FROM t_order',
    'distinct' => 'SELECT DISTINCT status FROM t_order ORDER BY status DESC',
    'is null' => 'SELECT order_id, status, payload FROM t_order WHERE big IS NULL OR amount IS NULL',
];

function pdoMode(string $name, bool $emulate, int $base): void
{
    global $host, $port, $user, $password, $database, $mode;
    $mode = $name;
    $dsn = "mysql:host=$host;port=$port;dbname=$database;charset=utf8mb4";
    $open = fn (array $attrs = []) => new PDO($dsn, $user, $password, $attrs + [PDO::ATTR_EMULATE_PREPARES => $emulate]);
    $db = $open();
    $other = $open();
    step('attributes', fn () => v([$db->getAttribute(PDO::ATTR_EMULATE_PREPARES), $db->getAttribute(PDO::ATTR_ERRMODE), $db->getAttribute(PDO::ATTR_AUTOCOMMIT)]));
    step('session', fn () => rows($db->query('SELECT @@character_set_client, @@character_set_connection, @@character_set_results, @@collation_connection, @@autocommit, DATABASE() = ' . $db->quote($database))->fetchAll(PDO::FETCH_NUM)));
    step('clear', fn () => $db->exec('DELETE FROM t_order'));

    $ins = $db->prepare('INSERT INTO t_order (' . COLUMNS . ') VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    foreach (fixture($base) as $i => $r) {
        step("insert $i", function () use ($ins, $r) {
            $ins->execute($r);
            return $ins->rowCount();
        });
    }
    // The same statement with typed binds: ints, a NULL, a LOB stream, a bool.
    step('insert typed', function () use ($ins, $base) {
        $lob = fopen('php://memory', 'w+');
        fwrite($lob, "\x00\x00lob\x00");
        rewind($lob);
        $ins->bindValue(1, $base + 7, PDO::PARAM_INT);
        $ins->bindValue(2, 7, PDO::PARAM_INT);
        $ins->bindValue(3, 'typed');
        $ins->bindValue(4, null, PDO::PARAM_NULL);
        $ins->bindValue(5, PHP_INT_MAX, PDO::PARAM_INT);
        $ins->bindValue(6, '2001-02-03 04:05:06.7');
        $ins->bindValue(7, true, PDO::PARAM_BOOL);
        $ins->bindValue(8, $lob, PDO::PARAM_LOB);
        $ins->execute();
        return $ins->rowCount();
    });

    $one = $db->prepare('SELECT ' . COLUMNS . ' FROM t_order WHERE order_id = :id AND user_id = :user');
    foreach (array_merge(fixture($base), [[$base + 7, 7]]) as $i => $r) {
        step("select $i", function () use ($one, $r) {
            $one->execute(['id' => $r[0], 'user' => $r[1]]);
            return rows($one->fetchAll(PDO::FETCH_NUM));
        });
    }
    step('select assoc', function () use ($db, $base) {
        $s = $db->prepare('SELECT order_id AS id, amount * 2 AS twice, big + 0 AS b, LENGTH(payload) len FROM t_order WHERE order_id = ? AND user_id = ?');
        $s->execute([$base + 1, 0]);
        $r = $s->fetch(PDO::FETCH_ASSOC);
        return v(array_keys($r)) . ' ' . v(array_values($r));
    });
    step('column meta', function () use ($db) {
        $s = $db->query('SELECT order_id, amount, big, created, note, payload FROM t_order ORDER BY order_id LIMIT 1');
        $out = [];
        for ($i = 0; $i < $s->columnCount(); $i++) {
            $m = $s->getColumnMeta($i);
            $out[] = $m['name'] . ':' . ($m['native_type'] ?? '-') . ':' . $m['len'] . ':' . $m['precision'] . ':' . $m['pdo_type'] . ':' . implode('/', $m['flags']);
        }
        return implode(' ', $out);
    });

    foreach (SCATTER as $label => $sql) {
        step($label, fn () => rows($db->query($sql)->fetchAll(PDO::FETCH_NUM)));
        step("$label prepared", function () use ($db, $sql) {
            $s = $db->prepare($sql);
            $s->execute();
            return rows($s->fetchAll(PDO::FETCH_NUM));
        });
    }
    step('in list limit param', function () use ($db) {
        $s = $db->prepare('SELECT order_id, status FROM t_order WHERE user_id IN (?, ?, ?) ORDER BY order_id DESC LIMIT ?');
        $s->bindValue(1, 0, PDO::PARAM_INT);
        $s->bindValue(2, 1, PDO::PARAM_INT);
        $s->bindValue(3, 3, PDO::PARAM_INT);
        $s->bindValue(4, 2, PDO::PARAM_INT);
        $s->execute();
        return rows($s->fetchAll(PDO::FETCH_NUM));
    });
    step('where value param', function () use ($db) {
        $s = $db->prepare('SELECT order_id FROM t_order WHERE big = ? OR amount = ? OR created = ? OR payload = ? OR note = ? ORDER BY order_id');
        $s->execute(['18446744073709551614', '0.5', '2000-01-01 00:00:00.000001', "\x00\x01\x00\xff'\"\\", 'Ünïcödé']);
        return rows($s->fetchAll(PDO::FETCH_NUM));
    });
    step('quote', function () use ($db) {
        $bin = "\x00\\'\"\x1a\n\r%_";
        $q = $db->quote($bin);
        $r = $db->query("SELECT order_id, HEX($q) FROM t_order WHERE payload = $q OR note = " . $db->quote("it's \"q\" \\ back") . ' ORDER BY order_id')->fetchAll(PDO::FETCH_NUM);
        return rows($r);
    });
    step('unbuffered', function () use ($open) {
        $u = $open([PDO::MYSQL_ATTR_USE_BUFFERED_QUERY => false]);
        $s = $u->query('SELECT order_id, big FROM t_order ORDER BY order_id');
        $first = $s->fetch(PDO::FETCH_NUM);
        $s->closeCursor();
        $n = $u->query('SELECT COUNT(*) FROM t_order')->fetchColumn();
        return v($first) . ' ' . v($n);
    });
    step('update across shards', function () use ($db) {
        $changed = $db->exec("UPDATE t_order SET status = 'paid' WHERE user_id IN (0, 1, 3)");
        $s = $db->prepare('UPDATE t_order SET amount = amount WHERE status = ?');
        $s->execute(['paid']);
        return v([$changed, $s->rowCount()]);
    });

    // Keys the proxy generates.
    step('last insert id', function () use ($db) {
        $db->exec("INSERT INTO t_order (user_id, status) VALUES (0, 'g0')");
        $id = $db->lastInsertId();
        $sql = $db->query('SELECT LAST_INSERT_ID()')->fetchColumn();
        $found = $db->query("SELECT status FROM t_order WHERE order_id = $id")->fetchColumn();
        return v([$id > 0, (string) $sql === $id, $found]);
    });
    step('last insert id prepared', function () use ($db) {
        $s = $db->prepare('INSERT INTO t_order (user_id, status) VALUES (?, ?)');
        $s->execute([1, 'g1']);
        $id = $db->lastInsertId();
        $f = $db->prepare('SELECT status FROM t_order WHERE order_id = ?');
        $f->execute([$id]);
        return v([$id > 0, $f->fetchColumn()]);
    });
    step('last insert id multi-row', function () use ($db) {
        $s = $db->prepare('INSERT INTO t_order (user_id, status) VALUES (?, ?), (?, ?), (?, ?)');
        $s->execute([0, 'm0', 1, 'm1', 2, 'm2']);
        $id = (int) $db->lastInsertId();
        $f = $db->prepare('SELECT status FROM t_order WHERE order_id IN (?, ?, ?) ORDER BY order_id');
        $f->execute([$id, $id + 1, $id + 2]);
        return v([$s->rowCount(), $f->fetchAll(PDO::FETCH_COLUMN)]);
    });
    step('generated rows', function () use ($db) {
        $n = $db->exec("DELETE FROM t_order WHERE status LIKE 'g_' OR status LIKE 'm_'");
        return v([$n, $db->lastInsertId() > 0]);
    });

    // Transactions over both data sources and the broadcast table.
    $count = fn (PDO $c) => $c->query("SELECT COUNT(*) FROM t_order WHERE status = 'tx'")->fetchColumn() . '/' . $c->query("SELECT COUNT(*) FROM t_dict WHERE code LIKE '$name%'")->fetchColumn();
    $txn = function (string $code) use ($db, $base, $name) {
        $s = $db->prepare("INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'tx')");
        foreach ([[$base + 10, 0], [$base + 11, 1], [$base + 12, 2], [$base + 13, 3]] as $r) {
            $s->execute($r);
        }
        $db->exec("UPDATE t_order SET status = 'tx' WHERE order_id = " . ($base + 2) . ' AND user_id = 1');
        $db->prepare('INSERT INTO t_dict (code, label) VALUES (?, ?)')->execute([$name . $code, 'x']);
    };
    step('rollback', function () use ($db, $other, $txn, $count) {
        $before = $db->inTransaction();
        $db->beginTransaction();
        $txn('r');
        $inside = $count($db) . ' ' . $count($other);
        $db->rollBack();
        return v([$before, $db->inTransaction()]) . " inside $inside after " . $count($db) . ' ' . $count($other);
    });
    step('commit', function () use ($db, $other, $txn, $count) {
        $db->beginTransaction();
        $txn('c');
        $db->commit();
        return $count($db) . ' ' . $count($other);
    });
    step('error in transaction', function () use ($db, $other, $base, $count) {
        $db->beginTransaction();
        $db->exec("DELETE FROM t_order WHERE status = 'tx'");
        try {
            $db->exec('INSERT INTO t_order (order_id, user_id) VALUES (' . ($base + 1) . ', 0)');
        } catch (PDOException $e) {
            $err = $e->errorInfo[1];
        }
        $inside = $db->inTransaction();
        $db->rollBack();
        return v([$err ?? null, $inside]) . ' ' . $count($other);
    });

    // Errors, and the connection after each.
    $errors = [
        'duplicate key' => 'INSERT INTO t_order (order_id, user_id, status) VALUES (' . ($base + 1) . ", 0, 'dup')",
        'syntax' => 'SELEC order_id FROM t_order',
        'syntax near' => 'SELECT order_id FROM t_order WHERE',
        'unknown column' => 'SELECT nope FROM t_order WHERE order_id = 1 AND user_id = 0',
        'unknown column scatter' => 'SELECT nope FROM t_order',
        'unknown table' => 'SELECT * FROM t_nope',
        'out of range' => 'UPDATE t_order SET big = -1 WHERE order_id = ' . ($base + 1) . ' AND user_id = 0',
        'too long' => "UPDATE t_order SET status = '" . str_repeat('s', 40) . "' WHERE order_id = " . ($base + 2) . ' AND user_id = 1',
    ];
    foreach ($errors as $label => $sql) {
        step($label, fn () => $db->exec($sql));
        step("$label prepared", function () use ($db, $sql) {
            $s = $db->prepare($sql);
            $s->execute();
            return $s->rowCount();
        });
        step("after $label", fn () => rows($db->query('SELECT COUNT(*), SUM(user_id) FROM t_order')->fetchAll(PDO::FETCH_NUM)));
    }
    step('duplicate key param', function () use ($db, $base) {
        $db->prepare('INSERT INTO t_order (order_id, user_id) VALUES (?, ?)')->execute([$base + 2, 1]);
    });
    step('error info', fn () => v($db->errorInfo()));

    step('charset', fn () => rows($db->query("SELECT note, LENGTH(note), CHAR_LENGTH(note), HEX(note), '😀', HEX('😀') FROM t_order WHERE order_id = " . ($base + 1) . ' AND user_id = 0')->fetchAll(PDO::FETCH_NUM)));
    step('charset param', function () use ($db) {
        $s = $db->prepare('SELECT order_id FROM t_order WHERE note = ? OR note = ?');
        $s->execute(['héllo 😀 ✓', 'ÜNÏCÖDÉ']);
        return rows($s->fetchAll(PDO::FETCH_NUM));
    });
    step('null params', function () use ($db) {
        $s = $db->prepare('SELECT ? IS NULL, ?, COUNT(*) FROM t_order WHERE status <=> ?');
        $s->bindValue(1, null, PDO::PARAM_NULL);
        $s->bindValue(2, null);
        $s->bindValue(3, null, PDO::PARAM_NULL);
        $s->execute();
        return rows($s->fetchAll(PDO::FETCH_NUM));
    });
}

function mysqliMode(int $base): void
{
    global $host, $port, $user, $password, $database, $mode;
    $mode = 'mysqli';
    $db = new mysqli($host, $user, $password, $database, $port);
    $db->set_charset('utf8mb4');
    step('session', fn () => $db->character_set_name() . ' ' . rows($db->query('SELECT @@character_set_client, @@character_set_results, @@collation_connection, @@autocommit')->fetch_all()));
    step('clear', function () use ($db) {
        $db->query('DELETE FROM t_order');
        return $db->affected_rows;
    });

    // One statement, bound once by reference and executed for every row:
    // after the first execute mysqlnd sends no parameter types.
    $ins = $db->prepare('INSERT INTO t_order (' . COLUMNS . ') VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    $id = $uid = 0;
    $status = $amount = $big = $created = $note = $payload = null;
    $ins->bind_param('iisssssb', $id, $uid, $status, $amount, $big, $created, $note, $payload);
    foreach (fixture($base) as $i => $r) {
        step("insert $i", function () use ($ins, $r, &$id, &$uid, &$status, &$amount, &$big, &$created, &$note, &$payload) {
            [$id, $uid, $status, $amount, $big, $created, $note, $blob] = $r;
            $payload = null;
            if ($blob !== null) {
                foreach (str_split($blob, 700) as $chunk) {
                    $ins->send_long_data(7, $chunk);
                }
            }
            $ins->execute();
            return $ins->affected_rows;
        });
    }
    step('insert execute array', function () use ($db, $base) {
        $s = $db->prepare('INSERT INTO t_order (' . COLUMNS . ') VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
        $s->execute([$base + 7, 7, 'typed', null, PHP_INT_MAX, '2001-02-03 04:05:06.7', 1, "\x00\x00lob\x00"]);
        return $s->affected_rows;
    });

    $sel = $db->prepare('SELECT ' . COLUMNS . ' FROM t_order WHERE order_id = ? AND user_id = ?');
    $sel->bind_param('ii', $id, $uid);
    foreach (array_merge(fixture($base), [[$base + 7, 7]]) as $i => $r) {
        step("select $i", function () use ($sel, $r, &$id, &$uid) {
            [$id, $uid] = $r;
            $sel->execute();
            return rows($sel->get_result()->fetch_all(MYSQLI_NUM));
        });
        step("select text $i", fn () => rows($db->query('SELECT ' . COLUMNS . " FROM t_order WHERE order_id = $r[0] AND user_id = $r[1]")->fetch_all(MYSQLI_NUM)));
    }
    step('bind result', function () use ($db) {
        $s = $db->prepare('SELECT order_id, amount, big, created FROM t_order ORDER BY big DESC, order_id LIMIT 3');
        $s->execute();
        $s->store_result();
        $s->bind_result($a, $b, $c, $d);
        $out = [];
        while ($s->fetch()) {
            $out[] = [$a, $b, $c, $d];
        }
        return $s->num_rows . ' ' . rows($out);
    });
    step('fields', function () use ($db) {
        $r = $db->query('SELECT order_id, amount, big, created, note, payload FROM t_order ORDER BY order_id LIMIT 1');
        return implode(' ', array_map(fn ($f) => "$f->name:$f->orgname:$f->table:$f->orgtable:$f->type:$f->length:$f->decimals:$f->flags:$f->charsetnr", $r->fetch_fields()));
    });
    step('stmt metadata', function () use ($db) {
        $s = $db->prepare('SELECT order_id, amount, big, created, note, payload FROM t_order WHERE user_id = ?');
        $m = $s->result_metadata();
        return $s->param_count . ' ' . $s->field_count . ' ' . implode(' ', array_map(fn ($f) => "$f->name:$f->table:$f->type:$f->length:$f->decimals:$f->flags", $m->fetch_fields()));
    });

    foreach (SCATTER as $label => $sql) {
        step($label, fn () => rows($db->query($sql)->fetch_all(MYSQLI_NUM)));
        step("$label prepared", function () use ($db, $sql) {
            $s = $db->prepare($sql);
            $s->execute();
            return rows($s->get_result()->fetch_all(MYSQLI_NUM));
        });
    }
    step('unbuffered', function () use ($db) {
        $r = $db->query('SELECT order_id, note FROM t_order ORDER BY note DESC, order_id', MYSQLI_USE_RESULT);
        $out = [];
        while ($row = $r->fetch_row()) {
            $out[] = $row;
        }
        $r->free();
        return rows($out);
    });
    step('in list limit param', function () use ($db) {
        $s = $db->prepare('SELECT order_id, status FROM t_order WHERE user_id IN (?, ?, ?) ORDER BY order_id DESC LIMIT ?');
        $a = 0;
        $b = 1;
        $c = 3;
        $n = 2;
        $s->bind_param('iiii', $a, $b, $c, $n);
        $s->execute();
        $first = rows($s->get_result()->fetch_all(MYSQLI_NUM));
        $n = 5;
        $s->execute();
        return $first . ' / ' . rows($s->get_result()->fetch_all(MYSQLI_NUM));
    });
    step('escape', function () use ($db) {
        $bin = $db->real_escape_string("\x00\x01\x00\xff'\"\\");
        return rows($db->query("SELECT order_id, HEX('$bin') FROM t_order WHERE payload = '$bin'")->fetch_all(MYSQLI_NUM));
    });
    step('update across shards', function () use ($db) {
        $db->query("UPDATE t_order SET status = 'paid' WHERE user_id IN (0, 1, 3)");
        $a = $db->affected_rows;
        $info = $db->info;
        $s = $db->prepare('UPDATE t_order SET amount = amount WHERE status = ?');
        $p = 'paid';
        $s->bind_param('s', $p);
        $s->execute();
        return v([$a, $info, $s->affected_rows]);
    });

    step('insert id', function () use ($db) {
        $db->query("INSERT INTO t_order (user_id, status) VALUES (0, 'g0')");
        $id = $db->insert_id;
        $sql = $db->query('SELECT LAST_INSERT_ID()')->fetch_row()[0];
        $found = $db->query("SELECT status FROM t_order WHERE order_id = $id")->fetch_row()[0];
        return v([$id > 0, (int) $sql === $id, $found]);
    });
    step('insert id prepared multi-row', function () use ($db) {
        $s = $db->prepare('INSERT INTO t_order (user_id, status) VALUES (?, ?), (?, ?), (?, ?)');
        $s->execute([0, 'm0', 1, 'm1', 2, 'm2']);
        $id = $s->insert_id;
        $f = $db->prepare('SELECT status FROM t_order WHERE order_id IN (?, ?, ?) ORDER BY order_id');
        $f->execute([$id, $id + 1, $id + 2]);
        return v([$s->affected_rows, $id === $db->insert_id, array_column($f->get_result()->fetch_all(), 0)]);
    });
    step('generated rows', function () use ($db) {
        $db->query("DELETE FROM t_order WHERE status LIKE 'g_' OR status LIKE 'm_'");
        return $db->affected_rows;
    });

    $other = new mysqli($host, $user, $password, $database, $port);
    $count = fn (mysqli $c) => $c->query("SELECT COUNT(*) FROM t_order WHERE status = 'tx'")->fetch_row()[0] . '/' . $c->query("SELECT COUNT(*) FROM t_dict WHERE code LIKE 'my%'")->fetch_row()[0];
    $txn = function (string $code) use ($db, $base) {
        $s = $db->prepare("INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'tx')");
        foreach ([[$base + 10, 0], [$base + 11, 1], [$base + 12, 2], [$base + 13, 3]] as $r) {
            $s->execute($r);
        }
        $db->query("UPDATE t_order SET status = 'tx' WHERE order_id = " . ($base + 2) . ' AND user_id = 1');
        $db->execute_query('INSERT INTO t_dict (code, label) VALUES (?, ?)', ['my' . $code, 'x']);
    };
    step('rollback', function () use ($db, $other, $txn, $count) {
        $db->begin_transaction();
        $txn('r');
        $inside = $count($db) . ' ' . $count($other);
        $db->rollback();
        return "inside $inside after " . $count($db) . ' ' . $count($other);
    });
    step('autocommit off rollback', function () use ($db, $other, $txn, $count) {
        $db->autocommit(false);
        $txn('a');
        $db->rollback();
        $db->autocommit(true);
        return $count($db) . ' ' . $count($other);
    });
    step('commit', function () use ($db, $other, $txn, $count) {
        $db->begin_transaction();
        $txn('c');
        $db->commit();
        return $count($db) . ' ' . $count($other);
    });

    $errors = [
        'duplicate key' => 'INSERT INTO t_order (order_id, user_id, status) VALUES (' . ($base + 1) . ", 0, 'dup')",
        'syntax' => 'SELEC order_id FROM t_order',
        'unknown column scatter' => 'SELECT nope FROM t_order',
        'unknown table' => 'SELECT * FROM t_nope',
    ];
    foreach ($errors as $label => $sql) {
        step($label, fn () => $db->query($sql));
        step("$label prepared", fn () => $db->prepare($sql)->execute());
        step("after $label", fn () => $db->errno . ' ' . rows($db->query('SELECT COUNT(*), SUM(user_id) FROM t_order')->fetch_all()));
    }
    step('multi query', function () use ($db, $base) {
        $db->multi_query("SELECT order_id FROM t_order WHERE order_id = " . ($base + 1) . " AND user_id = 0; UPDATE t_order SET status = 'mq' WHERE user_id = 2; SELECT COUNT(*) FROM t_order WHERE status = 'mq'");
        $out = [];
        do {
            if ($r = $db->store_result()) {
                $out[] = rows($r->fetch_all());
            } else {
                $out[] = 'affected ' . $db->affected_rows;
            }
        } while ($db->more_results() && $db->next_result());
        return implode(' ; ', $out);
    });
    step('after multi query', fn () => rows($db->query('SELECT COUNT(*) FROM t_order')->fetch_all()));
}

// The schema, made through the proxy as on MariaDB (DDL goes to every data node).
$setup = new PDO("mysql:host=$host;port=$port;dbname=$database;charset=utf8mb4", $user, $password);
foreach ([
    'DROP TABLE IF EXISTS t_order',
    'DROP TABLE IF EXISTS t_dict',
    'CREATE TABLE t_order (order_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32),'
        . ' amount DECIMAL(20,6), big BIGINT UNSIGNED, created DATETIME(6), note VARCHAR(64), payload BLOB)'
        . ' DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci',
    'CREATE TABLE t_dict (code VARCHAR(16) PRIMARY KEY, label VARCHAR(64))',
] as $ddl) {
    step(substr($ddl, 0, 22), fn () => $setup->exec($ddl));
}
$setup = null;

$modes = [
    ['pdo-emulated', true],
    ['pdo-native', false],
];
foreach ($modes as $i => [$name, $emulate]) {
    pdoMode($name, $emulate, 1000 * ($i + 1));
}
mysqliMode(9000);
