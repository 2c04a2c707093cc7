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
