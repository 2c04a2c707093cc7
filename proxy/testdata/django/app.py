# A small Django application (Debian 12's python3-django with mysqlclient,
# ENGINE django.db.backends.mysql), run by TestDjangoApplication through the
# proxy and against one MariaDB: migrate of the built-in apps (unsharded
# tables on the default data source) and of the shop app (t_order and
# t_order_item, sharded, keys the proxy generates), twice; showmigrations
# and sqlmigrate; the ORM as a user writes it: create, get, filter,
# exclude, slices, Paginator, aggregates, F() updates, bulk_create,
# get_or_create and update_or_create, select_related, atomic blocks with a
# savepoint rolled back, select_for_update, cascading delete, raw() and
# cursor() with parameters, exists(), iterator(), update() and delete()
# filtered across the foreign key. It prints one line per
# step; the two runs must print the same. Keys differ between the runs
# (AUTO_INCREMENT against Snowflake), so no step prints one.
#
# usage: app.py host port user password database [options-json]
import io
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in testdata
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
import django

django.setup()
if os.environ.get("DJANGO_SQL_LOG"):  # every statement on stderr, for debugging
    import logging

    from django.conf import settings

    settings.DEBUG = True
    logging.basicConfig(level=logging.DEBUG)
    logging.getLogger("django.db.backends").setLevel(logging.DEBUG)

from django.contrib.auth.models import Group, Permission, User
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.core.paginator import Paginator
from django.db import IntegrityError, connection, transaction
from django.db.models import Avg, Count, Exists, F, Max, OuterRef, Q, Subquery, Sum
from shop.models import Item, Order


def say(*args):
    print(repr(args))


def step(name, fn):
    """Runs one step and prints its result, or the error it raised."""
    try:
        say(name, fn())
    except Exception as e:
        print(name, repr(e), file=sys.stderr)
        code = e.args[0] if e.args else None
        say(name, "error", type(e).__name__, code if isinstance(code, int) else str(e)[:120])


def command(*args, **options):
    out = io.StringIO()
    call_command(*args, stdout=out, no_color=True, **options)
    return out.getvalue().strip().splitlines()


# What Django asked the server on connect.
step("connect", lambda: (connection.mysql_is_mariadb, connection.features.is_sql_auto_is_null_enabled,
                         connection.features.can_return_columns_from_insert, connection.isolation_level,
                         connection.features.supports_transactions))
step("migrate", lambda: command("migrate", verbosity=1))
step("migrate again", lambda: command("migrate", verbosity=1))
step("showmigrations", lambda: command("showmigrations"))
step("sqlmigrate", lambda: command("sqlmigrate", "shop", "0002"))
step("tables", lambda: sorted(t for t in connection.introspection.table_names() if t.startswith(("t_order", "auth_", "django_"))))
step("columns", lambda: [(c.name, c.null_ok) for c in connection.introspection.get_table_description(connection.cursor(), "t_order")])
step("constraints", lambda: sorted((k, v["columns"], v["primary_key"], v["index"]) for k, v in connection.introspection.get_constraints(connection.cursor(), "t_order").items()))
# Names left out: the proxy shows a foreign key's name shortened when its
# physical tables' suffix would push it past 64 characters (README).
step("item constraints", lambda: sorted((v["columns"], v["primary_key"], v["foreign_key"], v["index"]) for v in connection.introspection.get_constraints(connection.cursor(), "t_order_item").values()))
step("content types", lambda: sorted(ContentType.objects.values_list("app_label", "model")))
step("permissions", lambda: Permission.objects.filter(content_type__app_label="shop").count())


def users():
    u = User.objects.create_user("alice", "alice@example.com", "secret")
    g = Group.objects.create(name="staff")
    u.groups.add(g)
    u = User.objects.get(username="alice")
    return u.check_password("secret"), list(u.groups.values_list("name", flat=True)), User.objects.filter(groups__name="staff").count()


step("users", users)


def create():
    o = Order.objects.create(user_id=1, status="NEW", amount=10)
    got = Order.objects.get(pk=o.pk)
    return type(o.pk).__name__, o.pk > 0, o.pk == got.pk, got.status, got.note


step("create", create)


def bulk():
    orders = Order.objects.bulk_create([Order(user_id=1 + i % 4, status="B%02d" % i, amount=i * 5) for i in range(12)])
    pks = [o.pk for o in orders]
    items = []
    for i, o in enumerate(orders):
        for j in range(i % 3 + 1):
            items.append(Item(order=o, user_id=o.user_id, sku="s%02d-%d" % (i, j), qty=i + j))
    Item.objects.bulk_create(items)
    return len(pks), all(p is not None for p in pks), pks == sorted(pks), len(set(pks)), Item.objects.count()


step("bulk_create", bulk)
step("filter", lambda: list(Order.objects.filter(user_id=2).order_by("status").values_list("status", "amount")))
step("exclude", lambda: list(Order.objects.exclude(user_id__in=[1, 2]).exclude(status="NEW").order_by("-amount").values_list("status", flat=True)))
step("q", lambda: list(Order.objects.filter(Q(user_id=3) | Q(amount__gte=50)).order_by("status").values_list("status", flat=True)))
step("slice", lambda: list(Order.objects.order_by("amount", "status").values_list("status", flat=True)[3:8]))
step("slice by pk", lambda: list(Order.objects.order_by("-pk").values_list("status", flat=True)[:4]))
step("first last", lambda: (Order.objects.order_by("amount").first().status, Order.objects.order_by("amount").last().status))
step("get", lambda: Order.objects.get(status="B05").amount)
step("get missing", lambda: Order.objects.get(status="nope"))
step("get many", lambda: Order.objects.get(user_id=1))


def paginate():
    p = Paginator(Order.objects.order_by("status"), 5)
    return p.count, p.num_pages, [[o.status for o in p.page(n)] for n in p.page_range]


step("paginator", paginate)
step("aggregate", lambda: Order.objects.aggregate(n=Count("pk"), total=Sum("amount"), top=Max("amount"), avg=Avg("amount")))
step("aggregate filtered", lambda: Order.objects.filter(user_id=2).aggregate(Sum("amount"), Count("pk")))
step("values group by", lambda: list(Order.objects.values("user_id").annotate(n=Count("pk"), total=Sum("amount"), avg=Avg("amount")).order_by("user_id")))
step("annotate items", lambda: list(Order.objects.filter(user_id=3).annotate(n=Count("items"), q=Sum("items__qty")).order_by("status").values_list("status", "n", "q")))
step("annotate all", lambda: list(Order.objects.annotate(n=Count("items")).filter(n__gte=2).order_by("status").values_list("status", "n")))
step("items group by", lambda: list(Item.objects.values("user_id").annotate(qty=Sum("qty"), n=Count("pk")).order_by("-qty", "user_id")))


def f_update():
    n = Order.objects.filter(user_id=4).update(amount=F("amount") + 1)
    m = Order.objects.filter(status="B05").update(amount=F("amount") * 2, note="doubled")
    return n, m, list(Order.objects.filter(Q(user_id=4) | Q(status="B05")).order_by("status").values_list("status", "amount", "note"))


step("F update", f_update)


def save_f():
    o = Order.objects.get(status="B06")
    o.amount = F("amount") + 100
    o.save()
    o.refresh_from_db()
    return o.amount


step("save F", save_f)


def get_or_create():
    a, created_a = Order.objects.get_or_create(status="B07", defaults={"user_id": 9, "amount": 0})
    b, created_b = Order.objects.get_or_create(status="GOC", user_id=2, defaults={"amount": 7})
    c, created_c = Order.objects.update_or_create(status="GOC", user_id=2, defaults={"amount": 8})
    d, created_d = Order.objects.update_or_create(status="UOC", user_id=3, defaults={"amount": 9})
    return (a.status, created_a), (b.amount, created_b), (c.amount, created_c, c.pk == b.pk), (d.amount, created_d)


step("get_or_create", get_or_create)
step("select_related", lambda: [(i.sku, i.order.status) for i in Item.objects.select_related("order").filter(user_id=3).order_by("sku")])
step("select_related all", lambda: [(i.sku, i.order.status) for i in Item.objects.select_related("order").order_by("-qty", "sku")[:5]])
step("prefetch_related", lambda: [(o.status, [i.sku for i in o.items.all()]) for o in Order.objects.filter(user_id=2).prefetch_related("items").order_by("status")])
step("reverse", lambda: list(Order.objects.get(status="B04").items.order_by("sku").values_list("sku", flat=True)))
step("join filter", lambda: list(Order.objects.filter(items__qty__gte=10).distinct().order_by("status").values_list("status", flat=True)))


def nested():
    out = []
    with transaction.atomic():
        Order.objects.create(user_id=1, status="OUTER", amount=1)
        try:
            with transaction.atomic():
                Order.objects.create(user_id=1, status="INNER", amount=2)
                Order.objects.filter(status="B00").update(status="CHANGED")
                raise ValueError("boom")
        except ValueError:
            out.append("inner rolled back")
        try:
            with transaction.atomic():
                o = Order.objects.create(user_id=2, status="DUP", amount=3)
                Order.objects.create(order_id=o.pk, user_id=2, status="DUP2", amount=3)
        except IntegrityError as e:
            out.append(("duplicate", e.args[0]))
    out.append(list(Order.objects.filter(status__in=["OUTER", "INNER", "CHANGED", "B00", "DUP", "DUP2"]).order_by("status").values_list("status", flat=True)))
    return out


step("nested atomic", nested)


def rolled_back():
    try:
        with transaction.atomic():
            Order.objects.create(user_id=3, status="GONE", amount=1)
            Item.objects.filter(user_id=3).update(qty=F("qty") + 1000)
            raise RuntimeError("undo")
    except RuntimeError:
        pass
    return Order.objects.filter(status="GONE").exists(), Item.objects.filter(qty__gte=1000).exists()


step("atomic rolled back", rolled_back)


def for_update():
    with transaction.atomic():
        o = Order.objects.select_for_update().get(status="B01")
        o.amount += 1000
        o.save(update_fields=["amount"])
        locked = list(Order.objects.select_for_update().filter(user_id=2).order_by("status").values_list("status", flat=True))
    return Order.objects.get(status="B01").amount, locked


step("select_for_update", for_update)


def delete():
    o = Order.objects.get(status="B08")
    n = o.delete()
    m = Order.objects.filter(user_id=4, amount__lt=30).delete()
    return n, m, Order.objects.count(), Item.objects.count()


step("delete", delete)


def raw():
    rows = [(o.status, o.amount) for o in Order.objects.raw("SELECT order_id, status, amount FROM t_order WHERE user_id = %s AND amount > %s ORDER BY status", [3, 10])]
    with connection.cursor() as c:
        c.execute("SELECT status, amount FROM t_order WHERE user_id IN (%s, %s) ORDER BY amount DESC, status LIMIT %s", [1, 3, 4])
        fetched = c.fetchall()
        c.execute("UPDATE t_order SET note = %s WHERE user_id = %s", ["raw", 3])
        updated = c.rowcount
        c.execute("INSERT INTO t_order (user_id, status, amount, note) VALUES (%s, %s, %s, %s)", [2, "RAW", 42, ""])
        lastrowid = c.lastrowid
        c.execute("SELECT status FROM t_order WHERE order_id = %s", [lastrowid])
        by_lastrowid = c.fetchone()
        c.execute("SELECT COUNT(*), SUM(amount) FROM t_order WHERE note = %s", ["raw"])
        counted = c.fetchone()
    return rows, fetched, updated, lastrowid > 0, by_lastrowid, tuple(int(x) for x in counted)


step("raw", raw)
def quotes():
    tricky = "it's a \\ 'b\"%_"
    o = Order.objects.create(user_id=4, status="Q1", amount=1, note=tricky)
    with connection.cursor() as c:
        c.execute("SELECT note FROM t_order WHERE note = %s AND user_id = %s", [tricky, 4])
        by_cursor = c.fetchall()
    return (Order.objects.get(pk=o.pk).note == tricky, Order.objects.filter(note__contains="\\ '").count(),
            Order.objects.filter(note__startswith="it's").count(), by_cursor == ((tricky,),))


step("quotes", quotes)
step("exists", lambda: (Order.objects.filter(user_id=2, status="RAW").exists(), Order.objects.filter(status="none").exists(), Item.objects.filter(order__status="B03").exists()))
step("iterator", lambda: [o.status for o in Order.objects.filter(amount__gte=20).order_by("status").iterator(chunk_size=3)])
# values().distinct().count() and a sliced queryset's count() count over a
# derived table with DISTINCT or LIMIT: the proxy runs its query across
# data nodes and counts the rows (README: derived tables).
step("count distinct", lambda: (len(Order.objects.values("user_id").distinct()), Order.objects.aggregate(n=Count("user_id", distinct=True))["n"],
                                Order.objects.values("user_id").distinct().count(), Order.objects.order_by("pk")[:3].count(), Order.objects.all()[2:50].count()))
step("in bulk", lambda: sorted(o.status for o in Order.objects.in_bulk(list(Order.objects.filter(user_id=1).values_list("pk", flat=True))).values()))
step("dates", lambda: list(User.objects.filter(date_joined__year__gte=2000).values_list("username", flat=True)))
step("check", lambda: command("check", databases=["default"]))
step("conditional count", lambda: Order.objects.aggregate(big=Count("pk", filter=Q(amount__gt=20)), small=Sum("amount", filter=Q(amount__lte=20))))
# filter(items__...).update() is one UPDATE ... WHERE order_id IN (SELECT
# ... JOIN ...) on MariaDB, and a delete() filtered on an aggregate one
# DELETE ... WHERE item_id IN (SELECT ... GROUP BY ... HAVING ...): the
# proxy evaluates such a subquery over every data node first (README:
# subqueries).
step("update by join", lambda: (Order.objects.filter(items__qty__gte=10).update(note="big"),
                                list(Order.objects.filter(note="big").order_by("status").values_list("status", flat=True))))
step("delete by join", lambda: (Item.objects.filter(order__status="B07").delete(), Item.objects.filter(user_id=4).count()))
step("delete by aggregate", lambda: (Item.objects.annotate(n=Count("order__items")).filter(n__gte=3, qty__gte=12).delete(), Item.objects.count()))


def bulk_update():
    orders = list(Order.objects.filter(user_id__in=[1, 2]).order_by("status"))
    for i, o in enumerate(orders):
        o.amount = 1000 + i
    n = Order.objects.bulk_update(orders, ["amount"], batch_size=4)
    return n, list(Order.objects.filter(user_id__in=[1, 2]).order_by("status").values_list("status", "amount"))


step("bulk_update", bulk_update)


def subqueries():
    items = Item.objects.filter(order=OuterRef("pk"))
    both = Item.objects.filter(order=OuterRef("pk"), user_id=OuterRef("user_id"))
    last = list(Order.objects.annotate(last_sku=Subquery(items.order_by("-sku").values("sku")[:1])).order_by("status").values_list("status", "last_sku"))
    big = list(Order.objects.filter(Exists(items.filter(qty__gte=10))).order_by("status").values_list("status", flat=True))
    none = list(Order.objects.filter(~Exists(both)).order_by("status").values_list("status", flat=True))
    parent = list(Item.objects.annotate(st=Subquery(Order.objects.filter(pk=OuterRef("order")).values("status"))).filter(qty__gte=12).order_by("sku").values_list("sku", "st"))
    return last, big, none, parent


step("subqueries", subqueries)
step("update by exists", lambda: (Order.objects.filter(Exists(Item.objects.filter(order=OuterRef("pk"), qty__gte=12))).update(note="exists"),
                                  list(Order.objects.filter(note="exists").order_by("status").values_list("status", flat=True))))


def move():
    o = Order.objects.get(status="GOC")
    o.user_id = 3
    o.save()
    return list(Order.objects.filter(status="GOC").values_list("user_id", "amount")), Order.objects.filter(user_id=2, status="GOC").exists()


step("save moves", move)


def nowait():
    with transaction.atomic():
        return [o.status for o in Order.objects.select_for_update(nowait=True).filter(user_id=3).order_by("status")]


step("nowait", nowait)
step("latest earliest", lambda: (Order.objects.filter(user_id=3).latest("amount").status, Order.objects.earliest("amount", "status").status))
step("final", lambda: list(Order.objects.order_by("status").values_list("user_id", "status", "amount", "note")))
step("inspectdb", lambda: [line for line in command("inspectdb", "t_order", "t_order_item") if not line.startswith("#")])
step("dumpdata", lambda: len(command("dumpdata", "auth.user", "auth.group", "contenttypes", indent=None)[0]))
step("flush", lambda: (command("flush", interactive=False), Order.objects.count(), Item.objects.count(), User.objects.count(), ContentType.objects.count()))
