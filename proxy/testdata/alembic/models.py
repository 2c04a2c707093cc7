# The models of the schema the migrations make (what autogenerate
# compares the database with): al_customer without sharding rules (the
# default data source), t_order and t_order_item sharded and bound.
from sqlalchemy import BigInteger, Column, DateTime, Enum, ForeignKey, Index, Integer, MetaData, String, Table, UniqueConstraint, text

metadata = MetaData()

customer = Table(
    "al_customer", metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(40), nullable=False),
    Column("tier", Integer, nullable=False, server_default="1"),
    UniqueConstraint("name", name="uq_al_customer_name"),
    UniqueConstraint("tier", "name", name="uq_al_customer_tier_name"),
)

order = Table(
    "t_order", metadata,
    Column("order_id", BigInteger, primary_key=True),
    Column("user_id", Integer, nullable=False),
    Column("status", String(32), nullable=False),
    Column("amount", Integer, nullable=False, server_default="0"),
    Column("remark", String(64), comment="what the customer asked for"),
    Column("priority", Enum("low", "normal", "high", name="priority"), nullable=False, server_default="normal"),
    Column("created_at", DateTime, nullable=False, server_default=text("CURRENT_TIMESTAMP")),
    Index("ix_t_order_status", "status"),
    comment="orders, sharded by user_id",
)

item = Table(
    "t_order_item", metadata,
    Column("item_id", BigInteger, primary_key=True),
    Column("order_id", BigInteger, ForeignKey("t_order.order_id", name="fk_item_order", ondelete="CASCADE"), nullable=False),
    Column("user_id", Integer, nullable=False),
    Column("sku", String(20), nullable=False),
    Column("qty", Integer, nullable=False),
)


def include_object(obj, name, type_, reflected, compare_to):
    """include_object keeps autogenerate to the application's own tables:
    a table only in the database is compared (and would be dropped) when
    its name is one of the application's (al_, t_order: a physical table
    such as t_order_0 showing through the proxy counts), not when another
    application left it in the same schema (the test suite's t_dict)."""
    if type_ == "table" and reflected and compare_to is None:
        return name.startswith(("al_", "t_order"))
    return True
