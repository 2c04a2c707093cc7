# A small Pony ORM application (Debian's python3-pony 0.7.16), run by
# TestPonyApplication through the proxy over binding tables t_order and
# t_order_item and a broadcast customer table, and against one MariaDB:
# db.bind(provider='mysql') (Pony's connect-time queries: version(),
# database(), group_concat_max_len), generate_mapping(create_tables=True)
# (information_schema lookups, CREATE TABLE, indexes and foreign keys,
# with foreign_key_checks switched off around them), entities with
# Required, Optional and Set relations, inserts without keys whose ids
# commit() fills in, select() generator queries with order_by() and
# page(), count, sum, max, get, db_session committed and rolled back,
# TransactionIntegrityError on a duplicate key, Pony's optimistic updates
# and deletes. It prints one line per step; the two runs must print the
# same.
#
# Keys differ by nature (Snowflake keys through the proxy, 1, 2, 3 on
# MariaDB), so each row is printed under a label given in the order the
# rows were made: both kinds of key grow in that order.
#
# Usage: python3 pony_app.py host port user password database driver
# (driver: pymysql, or mysqldb for mysqlclient, which Pony prefers when
# both are installed).
import sys

host, port, user, password, database, driver = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
if driver == "pymysql":
    # As on a machine with PyMySQL only: Pony takes MySQLdb when it can.
    sys.modules["MySQLdb"] = None

from decimal import Decimal  # noqa: E402
from pony.orm import (Database, PrimaryKey, Required, Optional, Set, db_session, select, commit,  # noqa: E402
                      rollback, count, sum as psum, max as pmax, avg, desc, flush, TransactionIntegrityError, IntegrityError,
                      ObjectNotFound, MultipleObjectsFoundError, OptimisticCheckError)
import pony.orm.dbproviders.mysql as pony_mysql  # noqa: E402

db = Database()


class Customer(db.Entity):
    _table_ = "pn_customer"
    id = PrimaryKey(int, auto=True)
    name = Required(str, 40, unique=True)
    tier = Required(int, default=0)
    orders = Set("Order")
    referrer = Optional("Customer", reverse="referred")
    referred = Set("Customer", reverse="referrer")


class Order(db.Entity):
    _table_ = "t_order"
    order_id = PrimaryKey(int, size=64, auto=True)
    customer = Required(Customer, column="user_id")
    status = Required(str, 16)
    amount = Required(Decimal, precision=12, scale=2)
    note = Optional(str, 40)
    items = Set("Item")


class Item(db.Entity):
    _table_ = "t_order_item"
    item_id = PrimaryKey(int, size=64, auto=True)
    order = Required(Order, column="order_id")
    user_id = Required(int)
    sku = Required(str, 20)
    qty = Required(int)


labels = {}


def learn(entity, prefix):
    """learn labels the keys of entity's rows it has not seen, in key order."""
    pk = entity._pk_columns_[0]
    with db_session:
        for key in db.select("SELECT %s FROM %s ORDER BY %s" % (pk, entity._table_, pk)):
            if (prefix, key) not in labels:
                labels[(prefix, key)] = "%s%d" % (prefix, sum(1 for p, _ in labels if p == prefix) + 1)


def o(key):
    return labels.get(("o", key), "?%s" % key)


def it(key):
    return labels.get(("i", key), "?%s" % key)


def error(e):
    orig = getattr(e, "original_exc", None)
    code = orig.args[0] if orig is not None and orig.args else None
    return (type(e).__name__, type(orig).__name__ if orig is not None else None, code)


def step(name, *values):
    print(repr((name,) + values))


db.bind(provider="mysql", host=host, port=port, user=user, passwd=password, db=database)
step("driver", pony_mysql.mysql_module_name)
db.generate_mapping(create_tables=True)
step("server", db.provider.server_version >= (10, 0), db.provider.default_schema_name == database)
with db_session:
    step("tables", sorted(db.select("SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name")))
    step("foreign keys", sorted(tuple(r) for r in db.select("SELECT table_name, column_name, referenced_table_name, referenced_column_name FROM information_schema.key_column_usage WHERE table_schema = DATABASE() AND referenced_table_name IS NOT NULL")))
    step("group_concat_max_len", db.get("SELECT @@SESSION.group_concat_max_len"))
# generate_mapping again, as a second process of the application does:
# the tables are there.
db2 = Database()
db2.bind(provider="mysql", host=host, port=port, user=user, passwd=password, db=database)


class Customer2(db2.Entity):
    _table_ = "pn_customer"
    id = PrimaryKey(int, auto=True)
    name = Required(str, 40, unique=True)
    tier = Required(int, default=0)


db2.generate_mapping(create_tables=True, check_tables=True)
step("mapping again", True)

# A broadcast table: AUTO_INCREMENT keys, the same on every data source.
with db_session:
    cs = [Customer(name=n, tier=len(n)) for n in ("ann", "bob", "cy", "dee")]
    commit()
    step("customers", [c.id for c in cs])
with db_session:
    Customer[2].referrer = Customer[1]
    Customer[3].referrer = Customer[1]
with db_session:
    step("optional relation", sorted(c.name for c in Customer[1].referred), Customer[4].referrer, Customer[2].referrer.name)

# Orders without keys: commit() reads each INSERT's key.
with db_session:
    first = Order(customer=Customer[1], status="new", amount=Decimal("5.25"), note="first")
    commit()
    learn(Order, "o")
    step("create", o(first.order_id), first.customer.name)
with db_session:
    orders = [Order(customer=Customer[1 + i % 4], status="paid" if i % 2 == 0 else "new", amount=Decimal(10 * i), note="n%d" % i) for i in range(1, 13)]
    flush()
    learn(Order, "o")
    step("flush", [o(x.order_id) for x in orders[:3]])
with db_session:
    for x in select(x for x in Order).order_by(Order.order_id):
        for q in range(len(x.note) % 3):
            Item(order=x, user_id=x.customer.id, sku="%s-%d" % (x.note, q), qty=q + 1)
    commit()
    learn(Item, "i")
    step("items", count(i for i in Item), [it(i.item_id) for i in select(i for i in Item).order_by(Item.item_id)[:3]])

# Selects: by key, by sharding column, ranges, ordering, pages.
keys = sorted(k for (p, k) in labels if p == "o")
with db_session:
    x = Order[keys[3]]
    step("by key", o(x.order_id), x.customer.id, x.status, x.amount, x.note)
    step("get", o(Order.get(note="n5").order_id), Order.get(note="nope"))
    try:
        Order.get(status="paid")
    except MultipleObjectsFoundError as e:
        step("get many", type(e).__name__)
    try:
        Order[999]
    except ObjectNotFound as e:
        step("not found", type(e).__name__)
    step("where customer", [(o(x.order_id), x.amount) for x in select(x for x in Order if x.customer.id == 2).order_by(Order.order_id)])
    step("where in", [o(x.order_id) for x in select(x for x in Order if x.customer.id in (1, 3) and x.amount >= 20).order_by(desc(Order.amount))])
    step("between", [x.amount for x in select(x for x in Order if x.amount >= 30 and x.amount <= 80).order_by(Order.amount)])
    step("like", sorted(x.note for x in select(x for x in Order if x.note.startswith("n1"))))
    for page in (1, 2, 3):
        step("page", page, [(o(x.order_id), x.amount) for x in select(x for x in Order).order_by(desc(Order.amount), Order.order_id).page(page, 5)])
    step("limit offset", [o(x.order_id) for x in select(x for x in Order).order_by(Order.order_id)[2:6]])
    step("first", o(select(x for x in Order if x.status == "paid").order_by(Order.amount).first().order_id))
    step("relation", [i.sku for i in Order[keys[2]].items.order_by(Item.item_id)])
    step("attribute lifting", sorted(Customer[2].orders.note))
    step("join", sorted(select((i.sku, i.order.status) for i in Item if i.user_id == 3)))
    step("exists", select(x for x in Order if x.status == "paid").exists(), Order.exists(status="none"))
    step("for update", [o(x.order_id) for x in select(x for x in Order if x.customer.id == 1).order_by(Order.order_id).for_update()])
    step("to_dict", sorted((k, str(v)) for k, v in Order[keys[0]].to_dict(exclude="order_id").items()))

# Aggregates.
with db_session:
    step("count", count(x for x in Order), count(x for x in Order if x.status == "paid"), Order.select().count())
    step("sum max", psum(x.amount for x in Order), pmax(x.amount for x in Order), pmax(x.note for x in Order if x.customer.id == 2))
    step("group", sorted(select((x.customer.id, count(x), psum(x.amount)) for x in Order)))
    step("group status", sorted(select((x.status, count(x)) for x in Order)))
    step("having", sorted(select((x.customer.id, psum(x.amount)) for x in Order if psum(x.amount) > 150)))
    step("customer counts", sorted((c.name, count(c.orders)) for c in Customer.select()))
    step("distinct", sorted(select(x.status for x in Order).distinct()))
    step("avg", round(avg(x.amount for x in Order if x.customer.id == 3), 4), count(x.status for x in Order if x.amount > 0))
    step("customer aggregate", sorted(select((c.name, count(c.orders), psum(c.orders.amount)) for c in Customer)))
    step("having count", sorted(select(c.name for c in Customer if count(c.orders) > 3)))
    step("select_by_sql", [o(x.order_id) for x in Order.select_by_sql("SELECT * FROM t_order WHERE user_id = $u ORDER BY order_id", globals={"u": 2})])
    step("get_for_update", o(Order.get_for_update(note="n4").order_id))
    # Not run: customers with an order above 100 as Pony writes it,
    # select(c for c in Customer if exists(x for x in c.orders if ...)),
    # is a subquery on t_order correlated with pn_customer, which the
    # proxy refuses across data nodes (1235, as ShardingSphere without
    # SQL federation); the orders can name their customers instead.
    step("customers of orders", sorted(select(x.customer.name for x in Order if x.amount > 100).distinct()))

# Transactions: committed, rolled back, and an error at commit.
with db_session:
    Order(customer=Customer[3], status="tx", amount=1)
    Order(customer=Customer[4], status="tx", amount=2)
learn(Order, "o")
with db_session:
    step("committed", count(x for x in Order if x.status == "tx"))
with db_session:
    Order(customer=Customer[1], status="rb", amount=1)
    Order(customer=Customer[2], status="rb", amount=2)
    Customer[1].tier = 99
    flush()
    step("before rollback", count(x for x in Order if x.status == "rb"))
    rollback()
    step("rolled back", count(x for x in Order if x.status == "rb"), Customer[1].tier)
try:
    with db_session:
        Order(customer=Customer[2], status="lost", amount=1)
        raise RuntimeError("abandon")
except RuntimeError:
    pass
with db_session:
    step("exception", count(x for x in Order if x.status == "lost"))
try:
    with db_session:
        Order(customer=Customer[3], status="dup-tx", amount=1)
        Customer(name="ann")
except TransactionIntegrityError as e:
    step("duplicate", *error(e))
with db_session:
    step("after duplicate", count(x for x in Order if x.status == "dup-tx"), count(c for c in Customer))
try:
    with db_session:
        db.execute("INSERT INTO t_order (order_id, user_id, status, amount, note) VALUES ($k, 1, 'dup', 0, '')", {"k": first.order_id})
except IntegrityError as e:
    step("duplicate key", *error(e))
with db_session(serializable=True):
    step("serializable", count(x for x in Order if x.customer.id == 1))

# Updates and deletes: Pony's optimistic checks put the values it read in
# the UPDATE's WHERE clause.
with db_session:
    x = Order[keys[1]]
    x.status = "shipped"
    x.amount += 1
with db_session:
    step("updated", Order[keys[1]].status, Order[keys[1]].amount)
with db_session:
    a = Order[keys[2]]
    a.note
    db.execute("UPDATE t_order SET note = 'changed' WHERE order_id = $k", {"k": keys[2]})
    a.note = "mine"
    try:
        commit()
    except OptimisticCheckError as e:
        step("optimistic", type(e).__name__)
        rollback()
with db_session:
    step("after optimistic", Order[keys[2]].note)
with db_session:
    Order[keys[0]].items.clear()
    Order[keys[0]].delete()
with db_session:
    step("deleted", Order.exists(order_id=keys[0]), count(i for i in Item), count(x for x in Order))
with db_session:
    n = select(x for x in Order if x.status == "tx").delete(bulk=True)
    step("bulk delete", n, count(x for x in Order))
with db_session:
    try:
        db.select("SELECT nope FROM t_order")
    except Exception as e:
        step("unknown column", *error(e))
with db_session:
    step("still usable", count(x for x in Order if x.customer.id == 2))
