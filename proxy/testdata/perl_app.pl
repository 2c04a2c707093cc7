#!/usr/bin/perl
# A small Perl DBI application (Debian's libdbi-perl with
# libdbd-mariadb-perl), run by TestPerlDBIApplication through the proxy over
# binding tables and directly on one MariaDB. It connects as DBI's
# documentation does ({RaiseError => 1}, AutoCommit on) in two modes:
# DBD::MariaDB's default, placeholders replaced by the driver
# (mariadb_server_prepare off), and server-side prepared statements
# (mariadb_server_prepare=1 with the fallback to text statements
# disabled, so that a statement the proxy cannot prepare fails instead of
# passing as text). Each mode creates the tables, inserts without keys
# (the proxy's key generator fills them), reads with selectall_arrayref,
# selectrow_* and fetch loops, sorts, pages, aggregates and joins,
# updates and deletes by key, runs transactions with begin_work, rollback
# and commit, and makes errors whose err, errstr and state it prints. It
# prints one line per step; both runs must print the same.
#
# Keys differ by nature (Snowflake keys through the proxy, AUTO_INCREMENT
# on MariaDB), so each row is printed under a label given in the order the
# rows were made: both kinds of key grow in that order.
#
# Usage: perl perl_app.pl host port user password database
use strict;
use warnings;
use utf8;
use DBI;
use JSON::PP;

binmode STDOUT, ':encoding(UTF-8)';
my ($host, $port, $user, $password, $database) = @ARGV;
my $json = JSON::PP->new->canonical->allow_nonref;
my ($mode, %labels, %seen);

sub out {
    my ($name, @values) = @_;
    print join(' | ', $mode, $name, map { ref $_ || !defined $_ ? $json->encode($_) : $_ } @values), "\n";
}

# message is a server's message with each run's own database name taken
# out and keys written as their labels.
sub message {
    my ($m) = @_;
    $m =~ s/\Q$database\E/DB/g;
    $m =~ s/'(\d+)(-|')/"'" . label($1) . $2/ge;
    return $m;
}

# failed runs body and prints the error it raises (DBI's err, errstr and
# state, and the handle's after it), or what it returns.
sub failed {
    my ($dbh, $name, $body) = @_;
    my @r = eval { $body->() };
    if ($@) {
        out($name, 'error', $dbh->err, $dbh->state, message($dbh->errstr));
    } else {
        out($name, 'ok', \@r);
    }
}

# learn labels the keys of a table's rows it has not seen, in key order.
sub learn {
    my ($dbh, $table, $key, $prefix) = @_;
    for my $k (@{ $dbh->selectcol_arrayref("SELECT $key FROM $table ORDER BY $key") }) {
        next if exists $labels{"$prefix$k"};
        $labels{"$prefix$k"} = $prefix . ++$seen{$prefix};
    }
}

sub label {
    my ($k, $prefix) = @_;
    $prefix //= 'o';
    return defined $k ? $labels{"$prefix$k"} // "?$k" : undef;
}

for my $m (['client', ''], ['server', ';mariadb_server_prepare=1;mariadb_server_prepare_disable_fallback=1']) {
    ($mode, %labels, %seen) = ($m->[0]);
    my $dbh = DBI->connect("DBI:MariaDB:database=$database;host=$host;port=$port$m->[1]", $user, $password,
        { RaiseError => 1, PrintError => 0 });
    out('connect', $dbh->{AutoCommit}, $dbh->{RaiseError}, $dbh->{mariadb_server_prepare} ? 1 : 0, $dbh->ping ? 1 : 0);
    out('session', $dbh->selectrow_arrayref('SELECT @@autocommit, @@character_set_client, @@sql_mode'));

    $dbh->do($_) for (
        'DROP TABLE IF EXISTS t_order_item',
        'DROP TABLE IF EXISTS t_order',
        'CREATE TABLE t_order (order_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, user_id INT NOT NULL, '
            . 'status VARCHAR(16) NOT NULL, amount DECIMAL(10,2), note VARCHAR(64), created DATETIME, KEY idx_user (user_id))',
        'CREATE TABLE t_order_item (item_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, order_id BIGINT NOT NULL, '
            . 'user_id INT NOT NULL, sku VARCHAR(20) NOT NULL, qty INT NOT NULL, UNIQUE KEY uk_sku (order_id, sku))',
    );
    out('tables', $dbh->selectcol_arrayref(q{SHOW TABLES LIKE 't\_order%'}));
    out('primary key', [$dbh->primary_key(undef, undef, 't_order_item')]);
    my $cols = $dbh->column_info(undef, undef, 't_order', '%')->fetchall_arrayref({});
    out('column_info', [map { "$_->{COLUMN_NAME} $_->{TYPE_NAME} $_->{NULLABLE}" } @$cols]);

    # Inserts without keys, prepared once and executed with placeholders.
    my $ins = $dbh->prepare('INSERT INTO t_order (user_id, status, amount, note, created) VALUES (?, ?, ?, ?, ?)');
    my @ids;
    for my $i (0 .. 11) {
        my $rows = $ins->execute(1 + $i % 4, 'NEW', sprintf('%d.%02d', 10 * $i, $i), $i % 3 ? "n\x{e9}-$i" : undef,
            sprintf('2024-01-%02d 10:00:00', 1 + $i));
        push @ids, $dbh->last_insert_id(undef, undef, 't_order', 'order_id');
        die "insert id $ids[-1] and sth's $ins->{mariadb_insertid}" if $ids[-1] != $ins->{mariadb_insertid};
        die "$rows rows" if $rows != 1;
    }
    learn($dbh, 't_order', 'order_id', 'o');
    out('insert ids', [map { label($_) } @ids]);
    my ($lid) = $dbh->selectrow_array('SELECT LAST_INSERT_ID()');
    out('LAST_INSERT_ID()', label($lid), $lid == $ids[-1] ? 'same' : 'differs');
    my $n = $dbh->do('INSERT INTO t_order (user_id, status, amount) VALUES (?, ?, ?), (?, ?, ?)', undef, 1, 'MULTI', 1.5, 2, 'MULTI', 2.5);
    my $multi = $dbh->last_insert_id(undef, undef, undef, undef);
    learn($dbh, 't_order', 'order_id', 'o');
    out('multi-row', $n, label($multi), $dbh->selectrow_array('SELECT status FROM t_order WHERE order_id = ?', undef, $multi));
    my $item = $dbh->prepare('INSERT INTO t_order_item (order_id, user_id, sku, qty) VALUES (?, ?, ?, ?)');
    for my $i (0 .. 23) {
        my $o = $i % 12;
        $item->execute($ids[$o], 1 + $o % 4, "s$i", $i);
    }
    learn($dbh, 't_order_item', 'item_id', 'i');

    # Reads.
    out('selectall', [map { [label($_->[0]), @$_[1 .. $#$_]] } @{ $dbh->selectall_arrayref(
        'SELECT order_id, user_id, status, amount, note, created FROM t_order WHERE user_id = ? ORDER BY order_id', undef, 2) }]);
    out('slice', [map { label($_->{order_id}) . " $_->{amount}" } @{ $dbh->selectall_arrayref(
        'SELECT order_id, amount FROM t_order WHERE user_id IN (?, ?) AND amount >= ? ORDER BY amount DESC', { Slice => {} }, 1, 3, 20) }]);
    my $row = $dbh->selectrow_hashref('SELECT * FROM t_order WHERE order_id = ?', undef, $ids[4]);
    $row->{order_id} = label($row->{order_id});
    out('selectrow_hashref', $row);
    out('missing row', [$dbh->selectrow_array('SELECT status FROM t_order WHERE order_id = ?', undef, -1)]);
    my $sth = $dbh->prepare('SELECT order_id, amount FROM t_order ORDER BY amount DESC, order_id LIMIT ? OFFSET ?');
    for my $page (0 .. 2) {
        $sth->execute(5, 5 * $page);
        my @page;
        while (my ($k, $a) = $sth->fetchrow_array) {
            push @page, label($k) . " $a";
        }
        out('page', $page, \@page, $sth->rows);
    }
    out('names', $sth->{NAME}, $sth->{NUM_OF_FIELDS}, $sth->{NUM_OF_PARAMS});
    # Column metadata of a merged SELECT (every data node) and of an
    # aggregate over them.
    for my $q ('SELECT * FROM t_order ORDER BY order_id LIMIT 2', 'SELECT user_id, COUNT(*) AS n, SUM(amount), MAX(created) FROM t_order GROUP BY user_id') {
        $sth = $dbh->prepare($q);
        $sth->execute;
        out('metadata', $sth->{NAME}, $sth->{TYPE}, $sth->{NULLABLE}, $sth->{PRECISION}, $sth->{SCALE}, $sth->{mariadb_type_name}, $sth->{mariadb_is_num});
        $sth->finish;
    }
    $sth = $dbh->prepare('SELECT note FROM t_order WHERE note LIKE ? ORDER BY note');
    $sth->execute('n%');
    $sth->bind_columns(\my $note);
    my @notes;
    push @notes, $note while $sth->fetch;
    out('bind_columns', \@notes);

    # Aggregates.
    out('group by', $dbh->selectall_arrayref(
        'SELECT user_id, COUNT(*), SUM(amount), MIN(created), MAX(amount) FROM t_order WHERE status = ? GROUP BY user_id ORDER BY user_id', undef, 'NEW'));
    out('having', $dbh->selectall_arrayref(
        'SELECT user_id, SUM(amount) AS total FROM t_order GROUP BY user_id HAVING SUM(amount) > ? ORDER BY total DESC', undef, 100));
    out('count', $dbh->selectrow_arrayref('SELECT COUNT(*), COUNT(note), SUM(qty), AVG(qty) FROM t_order o JOIN t_order_item i ON i.order_id = o.order_id AND i.user_id = o.user_id'));

    # Joins between the binding tables.
    out('join', $dbh->selectall_arrayref(
        'SELECT i.sku, o.status, i.qty FROM t_order_item i JOIN t_order o ON i.order_id = o.order_id WHERE i.user_id = ? ORDER BY i.item_id', undef, 3));
    out('left join', [map { [label($_->[0]), $_->[1]] } @{ $dbh->selectall_arrayref(
        'SELECT o.order_id, COUNT(i.item_id) FROM t_order o LEFT JOIN t_order_item i ON i.order_id = o.order_id AND i.user_id = o.user_id '
        . 'WHERE o.user_id = ? GROUP BY o.order_id ORDER BY o.order_id', undef, 1) }]);

    # Updates and deletes by key.
    $n = $dbh->do('UPDATE t_order SET status = ?, amount = amount + ? WHERE order_id = ?', undef, 'PAID', 1, $ids[0]);
    out('update', $n, $dbh->do('UPDATE t_order SET status = ? WHERE order_id = ?', undef, 'PAID', -1));
    my $upd = $dbh->prepare('UPDATE t_order SET note = ? WHERE order_id = ?');
    $upd->execute('again', $ids[1]);
    out('sth rows', $upd->rows, $upd->execute('again', $ids[1]) + 0);
    out('delete', $dbh->do('DELETE FROM t_order_item WHERE order_id = ?', undef, $ids[11]) + 0,
        $dbh->do('DELETE FROM t_order WHERE order_id = ?', undef, $ids[11]) + 0);

    # Transactions: begin_work and rollback, begin_work and commit.
    $dbh->begin_work;
    out('in transaction', $dbh->{AutoCommit} ? 1 : 0);
    $ins->execute(1, 'GONE', 1, undef, undef);
    $ins->execute(2, 'GONE', 2, undef, undef);
    $dbh->do('UPDATE t_order SET status = ? WHERE order_id = ?', undef, 'GONE', $ids[2]);
    out('inside', $dbh->selectrow_array('SELECT COUNT(*) FROM t_order WHERE status = ?', undef, 'GONE'));
    $dbh->rollback;
    out('rolled back', $dbh->{AutoCommit}, $dbh->selectrow_array('SELECT COUNT(*) FROM t_order WHERE status = ?', undef, 'GONE'),
        $dbh->selectrow_array('SELECT status FROM t_order WHERE order_id = ?', undef, $ids[2]));
    $dbh->begin_work;
    $ins->execute(3, 'TX', 3, undef, undef);
    my $tx = $dbh->last_insert_id(undef, undef, undef, undef);
    $item->execute($tx, 3, 'tx', 1);
    $ins->execute(4, 'TX', 4, undef, undef);
    $dbh->commit;
    learn($dbh, 't_order', 'order_id', 'o');
    out('committed', $dbh->{AutoCommit}, [map { [label($_->[0]), $_->[1]] } @{ $dbh->selectall_arrayref(
        'SELECT order_id, user_id FROM t_order WHERE status = ? ORDER BY order_id', undef, 'TX') }],
        $dbh->selectrow_array('SELECT COUNT(*) FROM t_order_item WHERE order_id = ? AND user_id = ?', undef, $tx, 3));

    # Errors: err, errstr and state, and the connection after each.
    failed($dbh, 'duplicate key', sub { $dbh->do('INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, ?)', undef, $ids[0], 1, 'DUP') });
    failed($dbh, 'duplicate unique', sub { $item->execute($ids[0], 1, 's0', 9) });
    failed($dbh, 'syntax', sub { $dbh->do('SELEC 1') });
    failed($dbh, 'unknown column', sub { $dbh->selectall_arrayref('SELECT nope FROM t_order WHERE user_id = ?', undef, 1) });
    failed($dbh, 'unknown table', sub { $dbh->selectall_arrayref('SELECT * FROM t_nope') });
    failed($dbh, 'bad value', sub { $dbh->do('INSERT INTO t_order (user_id, status) VALUES (?, ?)', undef, 1, 'x' x 40) });
    failed($dbh, 'placeholders', sub { $dbh->selectall_arrayref('SELECT ? FROM t_order', undef, 1, 2) });
    $dbh->begin_work;
    $ins->execute(1, 'HALF', 1, undef, undef);
    failed($dbh, 'error in transaction', sub { $dbh->do('INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, ?)', undef, $ids[1], 2, 'DUP') });
    out('still in transaction', $dbh->{AutoCommit} ? 1 : 0, $dbh->selectrow_array('SELECT COUNT(*) FROM t_order WHERE status = ?', undef, 'HALF'));
    $dbh->rollback;
    out('after errors', $dbh->err // 'undef', $dbh->selectrow_array('SELECT COUNT(*), SUM(user_id) FROM t_order WHERE status <> ?', undef, 'HALF'));
    $dbh->disconnect;
}
