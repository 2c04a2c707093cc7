#!/usr/bin/env bash
# Installs the Debian packages the tests start for real: MariaDB servers,
# mariadb and mysqldump clients, etcd, sysbench, HAProxy, Prometheus, and the Python drivers PyMySQL and
# mysqlclient, the ORM SQLAlchemy and Django (for Debian's /usr/bin/python3), Node.js with the Sequelize
# application's npm packages (proxy/testdata/sequelize), and a JDK with MariaDB Connector/J (the JDBC
# application, proxy/testdata/connectorj). Does nothing when they are all present.
set -euo pipefail

need=()
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
command -v mariadb >/dev/null 2>&1 || need+=(mariadb-client)
command -v mysqldump >/dev/null 2>&1 || need+=(mariadb-client) # mysqldump, the dump tests' client
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
command -v node >/dev/null 2>&1 || need+=(nodejs) # TestSequelizeApplication
command -v npm >/dev/null 2>&1 || need+=(npm)
command -v javac >/dev/null 2>&1 || need+=(default-jdk-headless) # TestConnectorJApplication
[ -f /usr/share/java/mariadb-java-client.jar ] || need+=(libmariadb-java)

# npm_packages installs the Sequelize application's packages, pinned by its
# package-lock.json, once.
npm_packages() {
	local app
	app="$(cd "$(dirname "$0")/.." && pwd)/proxy/testdata/sequelize"
	if [ ! -d "$app/node_modules/sequelize" ]; then
		echo "install-deps: npm ci in $app" >&2
		npm ci --prefix "$app" --no-audit --no-fund --loglevel=error
	fi
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
