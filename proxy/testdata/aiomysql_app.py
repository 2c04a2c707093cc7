# A small asyncio application on aiomysql (Debian's python3-aiomysql 0.1,
# with its defaults: autocommit off, so every statement runs in a
# transaction the application commits or rolls back) and on SQLAlchemy's
# asyncio engine over it (mysql+aiomysql://), run by
# TestAiomysqlApplication through the proxy over binding tables and
# against one MariaDB: a pool, concurrent tasks inserting without keys
# (cursor.lastrowid is the key the proxy generated), executemany, selects
# by key, by the sharding column, ranges, ordering and pages, aggregates
# (DECIMAL and DATETIME values as the driver decodes them), DictCursor, an
# SSCursor streaming a large result (and one left unread), transactions
# with conn.begin() committed and rolled back, the implicit transaction of
# autocommit off committed and rolled back (another connection does not
# see it before), upserts, several statements in one query, a duplicate
# key, an unknown column, a too long value, conn.ping(), a lock wait
# timeout, KILL QUERY, a statement given up by the client, a connection
# with autocommit on and an init_command (ANSI_QUOTES), FOUND_ROWS(); then
# SQLAlchemy's asyncio engine: isolation levels, AUTOCOMMIT, create_all
# and reflect through run_sync, and an AsyncSession with models. It prints
# one line per step; the two runs must print the same.
#
# Keys differ by nature (AUTO_INCREMENT on MariaDB, Snowflake keys through
# the proxy), so no key is printed: what a key finds is.
import asyncio
import sys
from datetime import datetime
from decimal import Decimal
import warnings

import aiomysql
import pymysql
from sqlalchemy import BigInteger, Column, DateTime, Integer, MetaData, Numeric, String, Table, func, select, text
from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine
from sqlalchemy.orm import declarative_base

host, port, user, password, database, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]


def step(*a):
    print(a, flush=True)


def error(e):
    return (type(e).__name__, e.args[0] if e.args else None)


SCHEMA = [
    "DROP TABLE IF EXISTS t_order_item",
    "DROP TABLE IF EXISTS t_order",
    "DROP TABLE IF EXISTS %scustomer" % prefix,
    "CREATE TABLE t_order (order_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(16) NOT NULL, amount INT NOT NULL,"
    " price DECIMAL(10, 2) NOT NULL DEFAULT 0, placed DATETIME(3) NULL)",
    "CREATE TABLE t_order_item (item_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, order_id BIGINT NOT NULL, user_id INT NOT NULL, sku VARCHAR(20) NOT NULL, qty INT NOT NULL)",
    "CREATE TABLE %scustomer (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40) NOT NULL UNIQUE, tier INT NOT NULL DEFAULT 0)" % prefix,
]


async def place_order(pool, n):
    """place_order inserts an order without a key on a connection of its
    own, and checks what its lastrowid finds before it commits."""
    async with pool.acquire() as conn:
        async with conn.cursor() as cur:
            await cur.execute("INSERT INTO t_order (user_id, status, amount, price, placed) VALUES (%s, %s, %s, %s, %s)",
                              (1 + n % 4, "NEW", 10 * n, Decimal(n) + Decimal("0.25"), datetime(2026, 1, 1 + n, 12, 30, 0, 125000)))
            key = cur.lastrowid
            await cur.execute("SELECT user_id, amount FROM t_order WHERE order_id = %s", (key,))
            found = await cur.fetchone()
            await cur.execute("SELECT LAST_INSERT_ID()")
            (last,) = await cur.fetchone()
        await conn.commit()
        return key, (n, key > 0, found == (1 + n % 4, 10 * n), last == key)


async def count(pool, where="1=1", args=()):
    async with pool.acquire() as conn:
        async with conn.cursor() as cur:
            await cur.execute("SELECT COUNT(*) FROM t_order WHERE " + where, args)
            (n,) = await cur.fetchone()
        await conn.commit()
        return n


async def driver():
    pool = await aiomysql.create_pool(host=host, port=port, user=user, password=password, db=database, minsize=2, maxsize=6)
    async with pool.acquire() as conn:
        step("connected", conn.get_autocommit(), pool.minsize, pool.maxsize)
        async with conn.cursor() as cur:
            for q in SCHEMA:
                await cur.execute(q)
            await cur.execute("SELECT @@autocommit, @@session.autocommit, DATABASE() = %s", (database,))
            step("session", await cur.fetchone())
        await conn.commit()

    # Concurrent tasks, each with a connection of the pool.
    placed = await asyncio.gather(*(place_order(pool, n) for n in range(12)))
    keys = {n: key for key, (n, *_) in placed}
    step("concurrent inserts", [p for _, p in placed], len(set(keys.values())))

    async with pool.acquire() as conn:
        async with conn.cursor() as cur:
            # executemany: aiomysql sends one multi-row INSERT; lastrowid is
            # its first key, the others follow it.
            items = [(keys[i % 12], 1 + (i % 12) % 4, "s%d" % i, i) for i in range(30)]
            n = await cur.executemany("INSERT INTO t_order_item (order_id, user_id, sku, qty) VALUES (%s, %s, %s, %s)", items)
            first = cur.lastrowid
            await cur.execute("SELECT MIN(item_id), COUNT(*) FROM t_order_item")
            low, total = await cur.fetchone()
            step("executemany", n, cur.rowcount, first == low, total)
            await conn.commit()

            # Selects.
            await cur.execute("SELECT user_id, status, amount FROM t_order WHERE order_id = %s", (keys[3],))
            step("by key", await cur.fetchone())
            # By amount: the concurrent tasks' keys come in no set order.
            await cur.execute("SELECT amount FROM t_order WHERE user_id = %s ORDER BY amount", (2,))
            step("by user", await cur.fetchall())
            await cur.execute("SELECT amount FROM t_order WHERE amount BETWEEN %s AND %s ORDER BY amount DESC", (30, 80))
            step("range", [r[0] for r in await cur.fetchall()])
            await cur.execute("SELECT order_id FROM t_order WHERE order_id IN %s ORDER BY amount", ([keys[1], keys[5], keys[9]],))
            step("in", [r[0] for r in await cur.fetchall()] == [keys[1], keys[5], keys[9]])
            for page in range(3):
                await cur.execute("SELECT amount FROM t_order ORDER BY amount DESC LIMIT %s OFFSET %s", (5, 5 * page))
                step("page", page, [r[0] for r in await cur.fetchall()])
            # The values as the driver decodes them by their column types
            # (SUM of INT and AVG are DECIMAL, COUNT a BIGINT).
            await cur.execute("SELECT user_id, COUNT(*), SUM(amount), MAX(amount), AVG(amount), SUM(price), MIN(placed) FROM t_order GROUP BY user_id ORDER BY user_id")
            step("group", await cur.fetchall())
            await cur.execute("SELECT COUNT(*), SUM(amount), AVG(price), MAX(placed), COUNT(DISTINCT user_id) FROM t_order")
            step("totals", await cur.fetchone())
            await cur.execute("SELECT o.amount, COUNT(i.item_id), SUM(i.qty) FROM t_order o JOIN t_order_item i ON i.order_id = o.order_id WHERE o.user_id = %s GROUP BY o.order_id, o.amount ORDER BY o.amount", (3,))
            step("join", await cur.fetchall())
        async with conn.cursor(aiomysql.DictCursor) as cur:
            await cur.execute("SELECT user_id, status, amount, price, placed FROM t_order WHERE user_id IN (%s, %s) ORDER BY amount LIMIT 4", (1, 4))
            step("dict", await cur.fetchall(), [d[0] for d in cur.description])
        await conn.commit()

        # Transactions with begin(): committed, and rolled back.
        await conn.begin()
        async with conn.cursor() as cur:
            await cur.execute("INSERT INTO t_order (user_id, status, amount) VALUES (%s, 'TX', 1), (%s, 'TX', 2)", (2, 3))
            await cur.execute("UPDATE t_order SET status = 'PAID' WHERE order_id = %s", (keys[0],))
            step("in begin", cur.rowcount, await count(pool, "status IN ('TX', 'PAID')"))
        await conn.commit()
        step("committed", await count(pool, "status IN ('TX', 'PAID')"))
        await conn.begin()
        async with conn.cursor() as cur:
            await cur.execute("INSERT INTO t_order (user_id, status, amount) VALUES (%s, 'GONE', 3)", (4,))
            await cur.execute("DELETE FROM t_order WHERE order_id = %s", (keys[1],))
            await cur.execute("SELECT COUNT(*) FROM t_order WHERE status = 'GONE' OR order_id = %s", (keys[1],))
            step("before rollback", await cur.fetchone())
        await conn.rollback()
        step("rolled back", await count(pool, "status = 'GONE'"), await count(pool, "order_id = %s", (keys[1],)))

        # autocommit off without begin(): the first statement opens the
        # transaction, commit() and rollback() end it.
        async with conn.cursor() as cur:
            await cur.execute("INSERT INTO t_order (user_id, status, amount) VALUES (%s, 'IMPLICIT', 4)", (1,))
            step("implicit, unseen by others", await count(pool, "status = 'IMPLICIT'"))
        await conn.rollback()
        step("implicit rolled back", await count(pool, "status = 'IMPLICIT'"))
        async with conn.cursor() as cur:
            await cur.execute("INSERT INTO t_order (user_id, status, amount) VALUES (%s, 'IMPLICIT', 5)", (2,))
            await cur.execute("UPDATE t_order SET amount = amount + 1 WHERE user_id = %s AND status = 'NEW'", (3,))
            updated = cur.rowcount
        await conn.commit()
        step("implicit committed", updated, await count(pool, "status = 'IMPLICIT'"))

        # A large result streamed with SSCursor.
        async with conn.cursor() as cur:
            rows = [(keys[i % 12], 1 + (i % 12) % 4, "bulk%d" % i, i % 7) for i in range(3000)]
            for k in range(0, len(rows), 500):
                await cur.executemany("INSERT INTO t_order_item (order_id, user_id, sku, qty) VALUES (%s, %s, %s, %s)", rows[k:k + 500])
        await conn.commit()
        async with conn.cursor(aiomysql.SSCursor) as cur:
            await cur.execute("SELECT item_id, qty FROM t_order_item ORDER BY item_id")
            n, total, last, ordered = 0, 0, 0, True
            while True:
                batch = await cur.fetchmany(250)
                if not batch:
                    break
                for key, qty in batch:
                    ordered = ordered and key > last
                    n, total, last = n + 1, total + qty, key
            step("streamed", n, total, ordered)
        async with conn.cursor(aiomysql.SSDictCursor) as cur:
            await cur.execute("SELECT sku, qty FROM t_order_item WHERE user_id = %s AND qty > %s", (2, 3))
            first = await cur.fetchone()
            # Left unread: closing the cursor reads the rest.
        async with conn.cursor() as cur:
            await cur.execute("SELECT COUNT(*), SUM(qty) FROM t_order_item WHERE user_id = %s AND qty > %s", (2, 3))
            step("after unread stream", sorted(first), await cur.fetchone())
        await conn.commit()

        # An upsert by key, and several statements in one query (PyMySQL's
        # and so aiomysql's client flags ask for multi-statements).
        async with conn.cursor() as cur:
            n = await cur.execute("INSERT INTO t_order (order_id, user_id, status, amount) VALUES (%s, %s, 'UPSERT', 0) ON DUPLICATE KEY UPDATE amount = amount + 1000",
                                  (keys[6], 3))
            step("upsert", n, cur.lastrowid in (0, keys[6]), conn.affected_rows())
            await cur.execute("SELECT amount, status FROM t_order WHERE order_id = %s", (keys[6],))
            step("upserted", await cur.fetchone())
            # executemany of an upsert: one multi-row statement, split by
            # data node through the proxy.
            n = await cur.executemany("INSERT INTO t_order (order_id, user_id, status, amount) VALUES (%s, %s, %s, %s)"
                                      " ON DUPLICATE KEY UPDATE status = VALUES(status)",
                                      [(keys[i], 1 + i % 4, "UPSERTED", 0) for i in (7, 10, 11)])
            await cur.execute("SELECT user_id, status, amount FROM t_order WHERE status = 'UPSERTED' ORDER BY amount")
            step("upserted many", n, await cur.fetchall())
            await cur.execute("SELECT COUNT(*) FROM t_order WHERE user_id = 1; SELECT status, COUNT(*) FROM t_order GROUP BY status ORDER BY status")
            sets = [await cur.fetchall()]
            while await cur.nextset():
                sets.append(await cur.fetchall())
            step("multi", sets)
            await cur.execute("INSERT INTO t_order (user_id, status, amount) VALUES (4, 'MULTI', 7); UPDATE t_order SET amount = 8 WHERE status = 'MULTI'")
            step("multi write", cur.rowcount, await cur.nextset(), cur.rowcount, await cur.nextset())
        await conn.commit()

        # Errors, and the connection after each.
        async with conn.cursor() as cur:
            try:
                await cur.execute("INSERT INTO t_order (order_id, user_id, status, amount) VALUES (%s, %s, 'DUP', 0)", (keys[2], 3))
            except pymysql.err.IntegrityError as e:
                step("duplicate key", *error(e))
            await cur.execute("INSERT INTO %scustomer (name) VALUES ('ann'), ('bob')" % prefix)
            try:
                await cur.execute("INSERT INTO %scustomer (name, tier) VALUES ('ann', 2)" % prefix)
            except pymysql.err.IntegrityError as e:
                step("duplicate name", *error(e))
            await conn.commit()
            await conn.begin()
            await cur.execute("INSERT INTO t_order (user_id, status, amount) VALUES (1, 'HALF', 6)")
            try:
                await cur.execute("INSERT INTO t_order (order_id, user_id, status, amount) VALUES (%s, %s, 'DUP', 0)", (keys[4], 1))
            except pymysql.err.IntegrityError as e:
                step("duplicate in transaction", *error(e))
            await conn.rollback()
            try:
                await cur.execute("SELECT nope FROM t_order")
            except pymysql.err.OperationalError as e:
                step("unknown column", *error(e))
            await cur.execute("SELECT COUNT(*) FROM t_order WHERE status IN ('HALF', 'DUP')")
            step("after errors", await cur.fetchone(), await count(pool))
            try:
                await cur.execute("INSERT INTO t_order (user_id, status, amount) VALUES (1, %s, 0)", ("x" * 40,))
            except pymysql.err.DataError as e:
                step("too long", *error(e))
            await conn.rollback()
        await conn.ping()
        async with conn.cursor() as cur:
            await cur.execute("SELECT CONNECTION_ID()")
            step("ping", (await cur.fetchone())[0] == conn.thread_id())
        await conn.commit()

        # Row locks between two connections: a FOR UPDATE holds the row,
        # the other's update waits innodb_lock_wait_timeout and gives up.
        async with pool.acquire() as other:
            async with conn.cursor() as cur, other.cursor() as ocur:
                await ocur.execute("SET SESSION innodb_lock_wait_timeout = 1")
                await conn.begin()
                await cur.execute("SELECT amount FROM t_order WHERE order_id = %s FOR UPDATE", (keys[8],))
                locked = await cur.fetchone()
                try:
                    await ocur.execute("UPDATE t_order SET amount = 0 WHERE order_id = %s", (keys[8],))
                except pymysql.err.OperationalError as e:
                    step("lock wait", locked, *error(e))
                await other.rollback()
                await cur.execute("UPDATE t_order SET amount = amount + 1 WHERE order_id = %s", (keys[8],))
                await conn.commit()
                await ocur.execute("SELECT amount FROM t_order WHERE order_id = %s", (keys[8],))
                step("after lock", await ocur.fetchone())
            await other.commit()

        # KILL QUERY from another connection stops a running statement; a
        # statement given up by the client (asyncio.wait_for) closes its
        # connection, and the pool makes another.
        async with pool.acquire() as other:
            async with other.cursor() as ocur:
                async def kill_later():
                    # Once the statement runs, as SHOW PROCESSLIST shows.
                    running, tries = False, 0
                    while not running and tries < 200:
                        tries += 1
                        await asyncio.sleep(0.05)
                        await ocur.execute("SHOW FULL PROCESSLIST")
                        running = any(r[0] == conn.thread_id() and (r[7] or "").startswith("SELECT SLEEP") for r in await ocur.fetchall())
                        await other.commit()
                    await ocur.execute("KILL QUERY %s" % conn.thread_id())
                async with conn.cursor() as cur:
                    killer = asyncio.ensure_future(kill_later())
                    try:
                        await cur.execute("SELECT SLEEP(5) FROM t_order WHERE order_id = %s", (keys[9],))
                        step("killed", await cur.fetchall())
                    except pymysql.err.OperationalError as e:
                        step("killed", *error(e))
                    await killer
                    await cur.execute("SELECT COUNT(*) FROM t_order WHERE user_id = 2")
                    step("after kill", await cur.fetchone())
            await other.commit()
        await conn.commit()
    async with pool.acquire() as gone:
        try:
            cur = await gone.cursor()
            await asyncio.wait_for(cur.execute("SELECT SLEEP(3)"), 0.5)
        except asyncio.TimeoutError:
            step("given up", gone.closed)
    async with pool.acquire() as conn:
        async with conn.cursor() as cur:
            await cur.execute("SELECT COUNT(*) FROM t_order")
            step("pool after give-up", await cur.fetchone())
        await conn.commit()
    # A connection of its own, autocommit on, with an init_command: the
    # session's sql_mode with ANSI_QUOTES, where "..." names columns and
    # tables.
    conn = await aiomysql.connect(host=host, port=port, user=user, password=password, db=database, autocommit=True, charset="utf8mb4",
                                  init_command="SET SESSION sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES')")
    async with conn.cursor() as cur:
        await cur.execute("SELECT @@autocommit, FIND_IN_SET('ANSI_QUOTES', @@sql_mode) > 0")
        step("init_command", await cur.fetchone())
        await cur.execute('SELECT "user_id", COUNT(*) FROM "t_order" WHERE "status" = %s GROUP BY "user_id" ORDER BY "user_id"', ("NEW",))
        step("ansi quotes", await cur.fetchall())
        await cur.execute('INSERT INTO "t_order" ("user_id", "status", "amount") VALUES (%s, %s, %s)', (3, "日本語", 9))
        await cur.execute('SELECT "amount", CHAR_LENGTH("status") FROM "t_order" WHERE "order_id" = %s', (cur.lastrowid,))
        step("autocommitted", await cur.fetchone(), await count(pool, "status = %s", ("日本語",)))
        await cur.execute("SELECT SQL_CALC_FOUND_ROWS amount FROM t_order WHERE user_id IN (1, 2) ORDER BY amount DESC LIMIT 3")
        page = await cur.fetchall()
        await cur.execute("SELECT FOUND_ROWS()")
        step("found rows", page, await cur.fetchone())
    conn.close()

    step("pool", pool.size <= pool.maxsize, pool.freesize == pool.size)
    pool.close()
    await pool.wait_closed()


Base = declarative_base()
# MariaDB's notes (DROP TABLE IF EXISTS) and SQLAlchemy's identity-conflict
# warning of the failing flush.
warnings.simplefilter("ignore")


class Order(Base):
    __tablename__ = "t_order"
    order_id = Column(BigInteger, primary_key=True)
    user_id = Column(Integer, nullable=False)
    status = Column(String(16), nullable=False)
    amount = Column(Integer, nullable=False)
    price = Column(Numeric(10, 2), nullable=False, default=0)
    placed = Column(DateTime, nullable=True)


class Item(Base):
    __tablename__ = "t_order_item"
    item_id = Column(BigInteger, primary_key=True)
    order_id = Column(BigInteger, nullable=False)
    user_id = Column(Integer, nullable=False)
    sku = Column(String(20), nullable=False)
    qty = Column(Integer, nullable=False)


async def orm():
    """orm runs SQLAlchemy's asyncio engine over aiomysql."""
    engine = create_async_engine("mysql+aiomysql://%s:%s@%s:%d/%s" % (user, password, host, port, database), pool_size=3)
    async with engine.connect() as conn:
        step("engine", (await conn.execute(text("SELECT COUNT(*) FROM t_order WHERE status = 'NEW'"))).scalar(), await conn.get_isolation_level())
    async with engine.connect() as conn:
        conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(text("UPDATE t_order SET status = 'AUTO' WHERE status = 'MULTI'"))
        await conn.rollback()  # autocommit: nothing to roll back
        step("autocommit", await conn.get_isolation_level(), (await conn.execute(text("SELECT COUNT(*) FROM t_order WHERE status = 'AUTO'"))).scalar())
    rc = create_async_engine("mysql+aiomysql://%s:%s@%s:%d/%s" % (user, password, host, port, database), isolation_level="READ COMMITTED", pool_pre_ping=True)
    async with rc.connect() as conn:
        step("read committed", await conn.get_isolation_level(), (await conn.execute(text("SELECT @@tx_isolation"))).scalar())
    await rc.dispose()
    async with engine.connect() as conn:
        tables = await conn.run_sync(lambda c: sorted(t for t in c.dialect.get_table_names(c) if t.startswith(("t_order", prefix))))
        step("reflected", tables)
    # DDL through run_sync, as applications create their tables at start.
    notes = Table(prefix + "note", MetaData(), Column("id", Integer, primary_key=True), Column("body", String(100), nullable=False))
    async with engine.begin() as conn:
        await conn.run_sync(notes.metadata.drop_all)
        await conn.run_sync(notes.metadata.create_all)
        await conn.run_sync(notes.metadata.create_all)  # checkfirst: nothing to do
        await conn.execute(notes.insert(), [{"body": "first"}, {"body": "second"}])
    async with engine.connect() as conn:
        reflected = MetaData()
        await conn.run_sync(reflected.reflect, only=[prefix + "note", "t_order"])
        step("reflect", sorted((t.name, tuple(c.name for c in t.columns)) for t in reflected.sorted_tables),
             (await conn.execute(select(notes.c.body).order_by(notes.c.id))).scalars().all())
    async with engine.begin() as conn:
        await conn.run_sync(notes.metadata.drop_all)
    async with AsyncSession(engine, expire_on_commit=False) as s:
        orders = [Order(user_id=1 + i % 4, status="ORM", amount=500 + i, price=Decimal("9.99") * i, placed=datetime(2026, 2, 1 + i)) for i in range(6)]
        s.add_all(orders)
        await s.flush()
        ids = [o.order_id for o in orders]
        step("flushed", all(ids), len(set(ids)))
        s.add_all([Item(order_id=o.order_id, user_id=o.user_id, sku="orm%d" % o.amount, qty=1) for o in orders])
        await s.commit()
        got = await s.get(Order, ids[2])
        step("get", got.user_id, got.amount, got.price, got.placed)
        r = await s.execute(select(Order.amount).where(Order.status == "ORM").order_by(Order.amount.desc()).limit(3).offset(1))
        step("page", r.scalars().all())
        r = await s.execute(select(Order.user_id, func.count(), func.sum(Order.amount), func.sum(Order.price), func.max(Order.placed)).where(Order.status == "ORM").group_by(Order.user_id).order_by(Order.user_id))
        step("group", [tuple(row) for row in r])
        r = await s.execute(select(Item.sku, Order.amount).join(Order, Order.order_id == Item.order_id).where(Item.user_id == 2, Item.sku.like("orm%")).order_by(Item.sku))
        step("join", [tuple(row) for row in r])
        stream = await s.stream(select(Item.qty).where(Item.sku.like("bulk%")).order_by(Item.item_id))
        n = 0
        async for qty in stream.scalars():
            n += qty
        step("stream", n)
        async with s.begin_nested():
            s.add(Order(user_id=3, status="NESTED", amount=1))
        try:
            async with s.begin_nested():
                s.add(Order(order_id=ids[0], user_id=1, status="DUP", amount=0))
        except Exception as e:
            step("nested failed", type(e).__name__, e.orig.args[0])
        await s.commit()
        got.status = "SHIPPED"
        s.add(Order(user_id=4, status="ORM-GONE", amount=2))
        await s.flush()
        await s.rollback()
        r = await s.execute(select(Order.status, func.count()).where(Order.status.in_(["NESTED", "DUP", "ORM-GONE", "SHIPPED"])).group_by(Order.status).order_by(Order.status))
        step("after rollback", [tuple(row) for row in r])
        await s.delete(await s.get(Order, ids[5]))
        await s.commit()
        step("deleted", await s.scalar(select(func.count()).select_from(Order).where(Order.status == "ORM")))
    await engine.dispose()


asyncio.run(driver())
asyncio.run(orm())
