"""order note, status index, wider status

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-03 09:10:00

"""
from alembic import op
import sqlalchemy as sa

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("t_order", sa.Column("note", sa.String(length=64), nullable=True))
    op.create_index("ix_t_order_status", "t_order", ["status"], unique=False)
    op.alter_column("t_order", "status", existing_type=sa.String(length=16), type_=sa.String(length=32), existing_nullable=False)
    op.alter_column("al_customer", "tier", existing_type=sa.Integer(), server_default="1", existing_nullable=False)


def downgrade():
    op.alter_column("al_customer", "tier", existing_type=sa.Integer(), server_default="0", existing_nullable=False)
    op.alter_column("t_order", "status", existing_type=sa.String(length=32), type_=sa.String(length=16), existing_nullable=False)
    op.drop_index("ix_t_order_status", table_name="t_order")
    op.drop_column("t_order", "note")
