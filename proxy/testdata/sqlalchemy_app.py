# A small SQLAlchemy application (Debian's python3-sqlalchemy, with the
# PyMySQL or mysqlclient dialect), run by TestSQLAlchemyApplication
# through the proxy and against one MariaDB: models, a relationship loaded
# eagerly (selectin and joined), bulk inserts, pagination, nested
# transactions over savepoints, a rollback, a flush that moves a row to
# another data source, a join with an aggregate. It prints one line per
# step; the two runs must print the same.
import sys
import warnings
from sqlalchemy import create_engine, Column, BigInteger, Integer, String, ForeignKey, select, func, insert
from sqlalchemy.orm import declarative_base, relationship, Session, selectinload, joinedload

url, prefix = sys.argv[1], sys.argv[2]
Base = declarative_base()

class User(Base):
    __tablename__ = prefix + "users"
    id = Column(Integer, primary_key=True, autoincrement=False)
    name = Column(String(40))

class Order(Base):
    __tablename__ = "t_order"
    order_id = Column(BigInteger, primary_key=True, autoincrement=False)
    user_id = Column(Integer, nullable=False)
    status = Column(String(20))
    amount = Column(Integer)
    items = relationship("Item", primaryjoin="Order.order_id == foreign(Item.order_id)", order_by="Item.item_id", lazy="select")

class Item(Base):
    __tablename__ = "t_order_item"
    item_id = Column(BigInteger, primary_key=True, autoincrement=False)
    order_id = Column(BigInteger, nullable=False)
    user_id = Column(Integer, nullable=False)
    sku = Column(String(20))
    qty = Column(Integer)

warnings.simplefilter("ignore")  # SQLAlchemy's identity-conflict warning of the failing flush
engine = create_engine(url, future=True)
out = []
with engine.begin() as conn:
    for t in ("t_order_item", "t_order", prefix + "users"):
        conn.exec_driver_sql("DROP TABLE IF EXISTS " + t)
Base.metadata.create_all(engine)

with Session(engine) as s:
    # bulk insert
    s.add_all([User(id=i, name="u%d" % i) for i in range(1, 5)])
    s.execute(insert(Order), [dict(order_id=100 + i, user_id=1 + i % 4, status="NEW", amount=10 * i) for i in range(12)])
    s.add(Order(order_id=120, user_id=1, status="LONE", amount=0))
    s.execute(insert(Item), [dict(item_id=1000 + i, order_id=100 + i % 12, user_id=1 + (i % 12) % 4, sku="s%d" % i, qty=i) for i in range(30)])
    s.commit()
    # eager loading
    orders = s.scalars(select(Order).where(Order.user_id == 2).options(selectinload(Order.items)).order_by(Order.order_id)).all()
    out.append(("selectin", [(o.order_id, [i.item_id for i in o.items]) for o in orders]))
    orders = s.scalars(select(Order).where(Order.user_id == 3).options(joinedload(Order.items)).order_by(Order.order_id)).unique().all()
    out.append(("joined", [(o.order_id, [i.sku for i in o.items]) for o in orders]))
    # pagination
    for page in range(3):
        rows = s.scalars(select(Order.order_id).order_by(Order.order_id).limit(5).offset(5 * page)).all()
        out.append(("page", page, rows))
    out.append(("count", s.scalar(select(func.count()).select_from(Order)), s.scalar(select(func.sum(Order.amount)))))
    # nested transaction: inner fails and is rolled back, outer commits
    o = s.get(Order, 101)
    o.status = "PAID"
    try:
        with s.begin_nested():
            s.add(Order(order_id=900, user_id=1, status="X"))
            s.flush()
            s.add(Order(order_id=101, user_id=2, status="DUP"))
            s.flush()
    except Exception as e:
        out.append(("nested failed", type(e).__name__, e.orig.args[0] if hasattr(e, "orig") else None))
    with s.begin_nested():
        s.add(Order(order_id=901, user_id=3, status="KEPT"))
    s.commit()
    out.append(("after nested", s.scalars(select(Order.order_id).where(Order.order_id.in_([101, 900, 901])).order_by(Order.order_id)).all(), s.get(Order, 101).status))
    # a whole transaction rolled back
    s.add(Order(order_id=950, user_id=4, status="GONE"))
    s.flush()
    s.rollback()
    out.append(("rolled back", s.scalar(select(func.count()).select_from(Order).where(Order.order_id == 950))))
    # A save of every column that moves the row (user 1 -> 2: another
    # data source); an order without items, whose move breaks no binding.
    o = s.get(Order, 120)
    o.user_id, o.status = 2, "MOVED"
    s.commit()
    s.expire_all()
    out.append(("moved", [(x.order_id, x.user_id, x.status) for x in s.scalars(select(Order).where(Order.user_id == 2).order_by(Order.order_id))]))
    # aggregates by relationship
    rows = s.execute(select(Order.order_id, func.count(Item.item_id)).join(Item, Item.order_id == Order.order_id).where(Item.user_id == 1).group_by(Order.order_id).order_by(Order.order_id)).all()
    out.append(("join count", [tuple(r) for r in rows]))
for line in out:
    print(line)
