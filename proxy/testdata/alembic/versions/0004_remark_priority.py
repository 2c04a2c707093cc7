"""remark, priority, comments, cascading items, gift items

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-03 09:30:00

"""
from alembic import op
import sqlalchemy as sa

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade():
    op.alter_column("t_order", "note", new_column_name="remark", existing_type=sa.String(length=64), existing_nullable=True,
                    comment="what the customer asked for")
    op.add_column("t_order", sa.Column("priority", sa.Enum("low", "normal", "high", name="priority"), server_default="normal", nullable=False))
    op.add_column("t_order", sa.Column("created_at", sa.DateTime(), server_default=sa.text("CURRENT_TIMESTAMP"), nullable=False))
    op.create_table_comment("t_order", "orders, sharded by user_id")
    op.drop_constraint("fk_item_order", "t_order_item", type_="foreignkey")
    op.create_foreign_key("fk_item_order", "t_order_item", "t_order", ["order_id"], ["order_id"], ondelete="CASCADE")
    op.create_unique_constraint("uq_al_customer_tier_name", "al_customer", ["tier", "name"])
    # A gift item for each big order, without keys (AUTO_INCREMENT on
    # MariaDB, the proxy's key generator through it, which reads the
    # SELECT's rows first and inserts them).
    op.execute("INSERT INTO t_order_item (order_id, user_id, sku, qty) SELECT order_id, user_id, 'gift', 1 FROM t_order WHERE amount >= 70")
    op.execute("UPDATE t_order SET priority = 'high' WHERE amount >= 80")


def downgrade():
    op.execute("DELETE FROM t_order_item WHERE sku = 'gift'")
    op.drop_constraint("uq_al_customer_tier_name", "al_customer", type_="unique")
    op.drop_constraint("fk_item_order", "t_order_item", type_="foreignkey")
    op.create_foreign_key("fk_item_order", "t_order_item", "t_order", ["order_id"], ["order_id"])
    op.drop_table_comment("t_order", existing_comment="orders, sharded by user_id")
    op.drop_column("t_order", "created_at")
    op.drop_column("t_order", "priority")
    op.alter_column("t_order", "remark", new_column_name="note", existing_type=sa.String(length=64), existing_nullable=True, comment=None,
                    existing_comment="what the customer asked for")
