# A small peewee application (Debian's python3-peewee, MySQLDatabase over
# PyMySQL, its default driver), run by TestPeeweeApplication through the
# proxy over binding tables and against one MariaDB: models with a foreign
# key, create_tables(safe=True) twice, the introspection peewee offers,
# Model.create and insert_many without keys (the proxy's key generator
# fills them through the proxy, AUTO_INCREMENT on MariaDB), get_or_create,
# selects with where, order_by and paginate, fn.COUNT and fn.SUM with
# group_by, a join between the binding tables, atomic() blocks committed
# and rolled back with a nested atomic() (a savepoint), updates and deletes
# by primary key, and errors (IntegrityError on a duplicate key, an unknown
# column, DoesNotExist) after which the connection goes on. It prints one
# line per step; the two runs must print the same.
#
# Keys differ by nature (Snowflake keys through the proxy, 1, 2, 3 on
# MariaDB), so each row is printed under a label given in the order the
# rows were made: both kinds of key grow in that order.
import sys
from peewee import (MySQLDatabase, Model, BigAutoField, AutoField, IntegerField, CharField,
                    ForeignKeyField, IntegrityError, OperationalError, ProgrammingError, fn, JOIN)

host, port, user, password, database, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
db = MySQLDatabase(database, host=host, port=port, user=user, password=password)


class Base(Model):
    class Meta:
        database = db


class Customer(Base):
    id = AutoField()
    name = CharField(max_length=40, unique=True)
    tier = IntegerField(default=0)

    class Meta:
        table_name = prefix + "customer"


class Order(Base):
    order_id = BigAutoField()
    user_id = IntegerField(index=True)
    status = CharField(max_length=16)
    amount = IntegerField()

    class Meta:
        table_name = "t_order"


class Item(Base):
    item_id = BigAutoField()
    order = ForeignKeyField(Order, column_name="order_id", backref="items")
    user_id = IntegerField()
    sku = CharField(max_length=20)
    qty = IntegerField()

    class Meta:
        table_name = "t_order_item"


models = [Customer, Order, Item]
labels = {}


def label(key, prefix="o"):
    return labels.get((prefix, key), "?%s" % key)


def learn(model, prefix):
    """learn labels the keys of model's rows it has not seen, in key order."""
    pk = model._meta.primary_key
    for (key,) in model.select(pk).order_by(pk).tuples():
        if (prefix, key) not in labels:
            labels[(prefix, key)] = "%s%d" % (prefix, sum(1 for p, _ in labels if p == prefix) + 1)


def error(e):
    code = e.args[0] if e.args else None
    return (type(e).__name__, code)


out = []
step = lambda *a: out.append(a)

db.connect()
db.drop_tables(models, safe=True)
db.create_tables(models, safe=True)
db.create_tables(models, safe=True)  # safe: the tables are there, nothing to do
step("tables", [t for t in db.get_tables() if t in ("t_order", "t_order_item", prefix + "customer")])
step("indexes", sorted((i.name, tuple(i.columns), i.unique) for i in db.get_indexes("t_order_item")),
     sorted((i.name, tuple(i.columns), i.unique) for i in db.get_indexes("t_order")))
step("columns", sorted((c.name, c.data_type, c.null, c.primary_key) for c in db.get_columns("t_order_item")))
step("foreign keys", [(f.column, f.dest_table, f.dest_column) for f in db.get_foreign_keys("t_order_item")])
step("exists", Order.table_exists(), db.table_exists("nope"))

# get_or_create on a table without rules (the default data source).
for name in ("ann", "bob", "ann"):
    c, created = Customer.get_or_create(name=name, defaults={"tier": len(name)})
    step("get_or_create", name, c.id, created, c.tier)

# Keys left to the database (the proxy's key generator).
first = Order.create(user_id=1, status="NEW", amount=5)
learn(Order, "o")
step("create", label(first.order_id), first.user_id)
n = Order.insert_many([{"user_id": 1 + i % 4, "status": "NEW", "amount": 10 * i} for i in range(12)]).execute()
learn(Order, "o")
step("insert_many", n, label(db.execute_sql("SELECT LAST_INSERT_ID()").fetchone()[0]))
orders = [o for (o,) in Order.select(Order.order_id).order_by(Order.order_id).tuples()]
Item.insert_many([(orders[i % 13], 1 + ((i % 13) - 1) % 4 if i % 13 else 1, "s%d" % i, i) for i in range(30)],
                 fields=[Item.order, Item.user_id, Item.sku, Item.qty]).execute()
learn(Item, "i")
step("count", Order.select().count(), Item.select().count())

# Selects: by key, by sharding column, ranges, ordering and pagination.
o = Order.get_by_id(orders[3])
step("get_by_id", label(o.order_id), o.user_id, o.status, o.amount)
step("where user", [(label(x.order_id), x.amount) for x in Order.select().where(Order.user_id == 2).order_by(Order.order_id)])
step("where in", [label(x.order_id) for x in Order.select().where(Order.user_id.in_([1, 3]) & (Order.amount >= 20)).order_by(Order.amount.desc())])
step("between", [x.amount for x in Order.select().where(Order.amount.between(30, 80)).order_by(Order.amount)])
for page in (1, 2, 3):
    rows = Order.select().order_by(Order.amount.desc(), Order.order_id).paginate(page, 5)
    step("page", page, [(label(x.order_id), x.amount) for x in rows])
step("first", label(Order.select().where(Order.user_id == 4).order_by(Order.amount).first().order_id))
# peewee's MySQLDatabase sets sql_mode PIPES_AS_CONCAT and writes
# concatenation as ||.
step("concat", [r for (r,) in Order.select(Order.status.concat("-").concat(Order.amount)).where(Order.user_id == 3).order_by(Order.amount).tuples()])

# Aggregates.
step("count sum", [tuple(r) for r in Order.select(Order.user_id, fn.COUNT(Order.order_id), fn.SUM(Order.amount)).group_by(Order.user_id).order_by(Order.user_id).tuples()])
step("having", [tuple(r) for r in Order.select(Order.user_id, fn.SUM(Order.amount).alias("total")).group_by(Order.user_id).having(fn.SUM(Order.amount) > 150).order_by(Order.user_id).tuples()])
step("scalar", Order.select(fn.MAX(Order.amount)).scalar(), Order.select(fn.MIN(Order.amount)).where(Order.user_id == 2).scalar(),
     int(Item.select(fn.SUM(Item.qty)).scalar()))

# Joins between the binding tables, on the foreign key.
q = (Item.select(Item.sku, Order.status).join(Order).where(Item.user_id == 3).order_by(Item.item_id).tuples())
step("join", list(q))
q = (Order.select(Order.order_id, fn.COUNT(Item.item_id).alias("n"), fn.SUM(Item.qty))
     .join(Item, JOIN.LEFT_OUTER).where(Order.user_id == 2).group_by(Order.order_id).order_by(Order.order_id).tuples())
step("join count", [(label(k), n, int(s)) for k, n, s in q])
step("backref", [i.sku for i in Order.get_by_id(orders[1]).items.order_by(Item.item_id)])

# A transaction committed, with a nested atomic() (a savepoint) rolled
# back by a duplicate key.
with db.atomic():
    a = Order.create(user_id=2, status="TX", amount=1)
    b = Order.create(user_id=3, status="TX", amount=2)
    Item.create(order=a, user_id=2, sku="tx-a", qty=1)
    try:
        with db.atomic():
            Order.create(user_id=4, status="INNER", amount=3)
            Order.insert(order_id=orders[0], user_id=1, status="DUP", amount=0).execute()
    except IntegrityError as e:
        step("nested failed", *error(e))
    Order.update(status="PAID").where(Order.order_id == orders[2]).execute()
learn(Order, "o")
learn(Item, "i")
step("committed", [(label(x.order_id), x.status) for x in Order.select().where(Order.status.in_(["TX", "INNER", "PAID"])).order_by(Order.order_id)],
     [x.sku for x in Item.select().where(Item.sku.startswith("tx"))])

# A transaction rolled back on purpose, and one left by an exception.
with db.atomic() as txn:
    Order.create(user_id=1, status="GONE", amount=7)
    Order.update(amount=999).where(Order.order_id == orders[0]).execute()
    txn.rollback()
try:
    with db.atomic():
        Order.create(user_id=2, status="GONE", amount=8)
        raise RuntimeError("abort")
except RuntimeError:
    pass
step("rolled back", Order.select().where(Order.status == "GONE").count(), Order.get_by_id(orders[0]).amount)

# Updates and deletes by primary key.
o = Order.get_by_id(orders[4])
o.amount += 1
step("save", o.save(), Order.get_by_id(orders[4]).amount)
step("update", Order.update(status="SHIPPED").where(Order.order_id == orders[5]).execute(),
     Order.update(status="SHIPPED").where(Order.order_id == -1).execute())
step("delete items", Item.delete().where(Item.order == orders[6]).execute())
step("delete_by_id", Order.delete_by_id(orders[6]), Order.select().where(Order.order_id == orders[6]).exists())
o = Order.get_by_id(orders[7])
step("delete_instance", o.delete_instance(recursive=True), Item.select().where(Item.order == orders[7]).count())
step("after writes", [(label(x.order_id), x.status, x.amount) for x in Order.select().where(Order.user_id.in_([2, 3])).order_by(Order.order_id)])

# Errors, and the connection after each.
try:
    Order.insert(order_id=orders[0], user_id=1, status="DUP", amount=0).execute()
except IntegrityError as e:
    step("duplicate key", *error(e))
try:
    Customer.create(name="bob")
except IntegrityError as e:
    step("duplicate name", *error(e))
try:
    Order.get_by_id(-5)
except Order.DoesNotExist as e:
    step("missing", type(e).__name__)
try:
    db.execute_sql("SELECT nope FROM t_order")
except (OperationalError, ProgrammingError) as e:
    step("unknown column", *error(e))
try:
    Item.create(order=999999, user_id=1, sku="orphan", qty=0)
except IntegrityError as e:
    step("foreign key", type(e).__name__, e.args[0])
step("after errors", Order.select().count(), Customer.select().count(), db.in_transaction())
db.close()
for line in out:
    print(line)
