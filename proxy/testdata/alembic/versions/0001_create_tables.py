"""create tables

Revision ID: 0001
Revises:
Create Date: 2026-12-03 09:00:00

"""
from alembic import op
import sqlalchemy as sa

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "al_customer",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("tier", sa.Integer(), server_default="0", nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name", name="uq_al_customer_name"),
    )
    op.create_table(
        "t_order",
        sa.Column("order_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("amount", sa.Integer(), server_default="0", nullable=False),
        sa.PrimaryKeyConstraint("order_id"),
    )
    op.create_table(
        "t_order_item",
        sa.Column("item_id", sa.BigInteger(), nullable=False),
        sa.Column("order_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("sku", sa.String(length=20), nullable=False),
        sa.Column("qty", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["order_id"], ["t_order.order_id"], name="fk_item_order"),
        sa.PrimaryKeyConstraint("item_id"),
    )


def downgrade():
    op.drop_table("t_order_item")
    op.drop_table("t_order")
    op.drop_table("al_customer")
