# Alembic's online environment, as `alembic init` writes it, with the
# database URL from -x url=... and the models' metadata for autogenerate;
# compare_type and compare_server_default so that a column's type or
# default that differs is a change too; include_object leaves out tables
# other applications keep in the same schema.
from logging.config import fileConfig

from alembic import context
from sqlalchemy import engine_from_config, pool

import models

config = context.config
fileConfig(config.config_file_name)
config.set_main_option("sqlalchemy.url", context.get_x_argument(as_dictionary=True)["url"])
target_metadata = models.metadata


def run_migrations_online():
    connectable = engine_from_config(config.get_section(config.config_ini_section), prefix="sqlalchemy.", poolclass=pool.NullPool)
    with connectable.connect() as connection:
        context.configure(connection=connection, target_metadata=target_metadata, compare_type=True, compare_server_default=True, include_object=models.include_object)
        with context.begin_transaction():
            context.run_migrations()


run_migrations_online()
