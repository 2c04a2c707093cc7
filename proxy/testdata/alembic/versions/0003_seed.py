"""seed customers and orders

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-03 09:20:00

"""
from alembic import op
import sqlalchemy as sa

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

customer = sa.table("al_customer", sa.column("name", sa.String), sa.column("tier", sa.Integer))
order = sa.table("t_order", sa.column("user_id", sa.Integer), sa.column("status", sa.String),
                 sa.column("amount", sa.Integer), sa.column("note", sa.String))


def upgrade():
    op.bulk_insert(customer, [{"name": "ann", "tier": 1}, {"name": "bob", "tier": 2}, {"name": "cy", "tier": 0}])
    # No order_id: AUTO_INCREMENT on MariaDB, the proxy's key generator
    # through it.
    op.bulk_insert(order, [{"user_id": 1 + i % 4, "status": "NEW", "amount": 10 * i, "note": None} for i in range(10)])
    op.execute("UPDATE t_order SET note = CONCAT('seeded ', amount) WHERE amount >= 50")
    op.execute(order.update().where(order.c.user_id == 2).values(status="PAID"))
    op.execute(customer.update().where(customer.c.name == "cy").values(tier=customer.c.tier + 5))


def downgrade():
    op.execute(order.delete().where(order.c.status.in_(["NEW", "PAID"])))
    op.execute("DELETE FROM al_customer WHERE name IN ('ann', 'bob', 'cy')")
