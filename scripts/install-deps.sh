#!/usr/bin/env bash
# Installs the Debian packages the tests start for real: MariaDB servers,
# mariadb, mysqldump and the other client tools (mariadb-admin, -check, -show, -import, -slap), etcd, sysbench, HAProxy, Prometheus, and the Python drivers PyMySQL and
# mysqlclient, the ORMs SQLAlchemy, Django, peewee and Pony, Alembic, aiomysql (for Debian's /usr/bin/python3), Node.js with the Sequelize,
# TypeORM, Knex and Drizzle applications' npm packages (proxy/testdata/sequelize, proxy/testdata/typeorm), a JDK with MariaDB Connector/J (the JDBC
# application, proxy/testdata/connectorj), PHP's command line with PDO_MySQL and mysqli (the PHP
# application, proxy/testdata/php), Doctrine DBAL and ORM with Symfony's cache (the Doctrine application,
# proxy/testdata/doctrine), Laravel's Eloquent (the Laravel application, proxy/testdata/laravel) and Adminer (served by PHP's built-in web server), Ruby's
# ActiveRecord with mysql2 (the Rails application, proxy/testdata/rails), Sequel (proxy/testdata/sequel), Perl's DBI with
# DBD::MariaDB (the Perl application, proxy/testdata/perl_app.pl), mycli, mydumper with
# myloader (TestMydumperApplication), and Percona Toolkit (TestPerconaToolkitApplication).
# Node.js's packages include MariaDB's Node.js connector and mysqljs
# (proxy/testdata/nodedrivers, TestMariadbNodeApplication, TestMysqljsApplication).
# pyodbc with MariaDB Connector/ODBC under unixODBC (proxy/testdata/odbc_app.py,
# TestODBCApplication).
# Does nothing when they are all present.
set -euo pipefail

need=()
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
command -v mariadb >/dev/null 2>&1 || need+=(mariadb-client)
command -v mysqldump >/dev/null 2>&1 || need+=(mariadb-client) # mysqldump, the dump tests' client
# The client tools the tests drive (mariadb-client ships them all).
for tool in mariadb-admin mariadb-check mariadb-show mariadb-import mariadb-slap; do
	command -v "$tool" >/dev/null 2>&1 || need+=(mariadb-client)
done
command -v etcd >/dev/null 2>&1 || need+=(etcd-server)
command -v etcdctl >/dev/null 2>&1 || need+=(etcd-client)
command -v sysbench >/dev/null 2>&1 || need+=(sysbench)
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || need+=(haproxy)
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
/usr/bin/python3 -c 'import pymysql' >/dev/null 2>&1 || need+=(python3-pymysql)
/usr/bin/python3 -c 'import MySQLdb' >/dev/null 2>&1 || need+=(python3-mysqldb)
/usr/bin/python3 -c 'import sqlalchemy' >/dev/null 2>&1 || need+=(python3-sqlalchemy) # TestSQLAlchemyApplication
/usr/bin/python3 -c 'import django' >/dev/null 2>&1 || need+=(python3-django) # TestDjangoApplication
/usr/bin/python3 -c 'import peewee' >/dev/null 2>&1 || need+=(python3-peewee) # TestPeeweeApplication
/usr/bin/python3 -c 'import alembic' >/dev/null 2>&1 || need+=(python3-alembic) # TestAlembicApplication
/usr/bin/python3 -c 'import aiomysql' >/dev/null 2>&1 || need+=(python3-aiomysql) # TestAiomysqlApplication (and SQLAlchemy's asyncio engine over it)
/usr/bin/python3 -c 'import pony' >/dev/null 2>&1 || need+=(python3-pony) # TestPonyApplication
command -v node >/dev/null 2>&1 || need+=(nodejs) # TestSequelizeApplication, TestTypeORMApplication, TestKnexApplication, TestDrizzleApplication, TestMikroORMApplication
command -v npm >/dev/null 2>&1 || need+=(npm) # and TestMariadbNodeApplication, TestMysqljsApplication (npm_packages)
command -v javac >/dev/null 2>&1 || need+=(default-jdk-headless) # TestConnectorJApplication
[ -f /usr/share/java/mariadb-java-client.jar ] || need+=(libmariadb-java)
command -v php >/dev/null 2>&1 || need+=(php-cli) # TestPHPApplication
php -r 'exit(extension_loaded("pdo_mysql") && extension_loaded("mysqli") ? 0 : 1);' >/dev/null 2>&1 || need+=(php-mysql)
[ -f /usr/share/php/Doctrine/DBAL/autoload.php ] || need+=(php-doctrine-dbal) # TestDoctrineApplication
[ -f /usr/share/php/Doctrine/ORM/autoload.php ] || need+=(php-doctrine-orm)
[ -f /usr/share/php/Symfony/Component/Cache/autoload.php ] || need+=(php-symfony-cache) # the ORM's metadata cache
[ -f /usr/share/php/Illuminate/Database/autoload.php ] || need+=(php-laravel-framework) # TestLaravelApplication
command -v ruby >/dev/null 2>&1 && ruby -e 'require "active_record"' >/dev/null 2>&1 || need+=(ruby-activerecord) # TestActiveRecordApplication
ruby -e 'require "mysql2"' >/dev/null 2>&1 || need+=(ruby-mysql2)
ruby -e 'require "sequel"' >/dev/null 2>&1 || need+=(ruby-sequel) # TestSequelApplication
[ -f /usr/share/adminer/adminer.php ] || need+=(adminer) # TestAdminerApplication
command -v mydumper >/dev/null 2>&1 && command -v myloader >/dev/null 2>&1 || need+=(mydumper) # TestMydumperApplication
perl -MDBI -MDBD::MariaDB -e 1 >/dev/null 2>&1 || need+=(libdbd-mariadb-perl) # TestPerlDBIApplication (brings libdbi-perl)
command -v mycli >/dev/null 2>&1 || need+=(mycli) # TestMycliApplication
command -v pt-archiver >/dev/null 2>&1 || need+=(percona-toolkit) # TestPerconaToolkitApplication
/usr/bin/python3 -c 'import pyodbc' >/dev/null 2>&1 || need+=(python3-pyodbc) # TestODBCApplication (brings unixODBC's libodbc2)
compgen -G '/usr/lib/*/odbc/libmaodbc.so' >/dev/null || need+=(odbc-mariadb) # MariaDB Connector/ODBC, the driver it loads

# npm_packages installs the Node.js applications' packages (Sequelize;
# TypeORM, Knex and Drizzle; MikroORM; mariadb and mysql), each pinned by its
# package-lock.json, once.
npm_packages() {
	local root app
	root="$(cd "$(dirname "$0")/.." && pwd)/proxy/testdata"
	for app in sequelize/sequelize typeorm/typeorm typeorm/knex typeorm/drizzle-orm mikroorm/@mikro-orm/core nodedrivers/mariadb nodedrivers/mysql; do
		if [ ! -d "$root/${app%%/*}/node_modules/${app#*/}" ]; then
			echo "install-deps: npm ci in $root/${app%%/*}" >&2
			npm ci --prefix "$root/${app%%/*}" --no-audit --no-fund --loglevel=error
		fi
	done
}

if [ ${#need[@]} -eq 0 ]; then
	npm_packages
	exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
	sudo="sudo"
fi
echo "install-deps: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${need[@]}"
npm_packages
