# What mycli (Debian's mycli) learns from the server when its interactive
# prompt starts, run without a terminal: the prompt itself needs one, but
# its completion refresher is mycli's own code and runs as the prompt runs
# it, on a connection of its own (SQLExecute, PyMySQL), in a background
# thread: SHOW DATABASES, SHOW TABLES, information_schema.columns and
# ROUTINES of the current schema, mysql.user and mysql.help_topic (whose
# errors mycli swallows). Run by TestMycliApplication through the proxy
# and against MariaDB; it prints what the completer then offers, one line
# per kind, and both runs must print the same.
import sys
import threading

from mycli.completion_refresher import CompletionRefresher
from mycli.sqlexecute import SQLExecute

host, port, user, password, database = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
executor = SQLExecute(database, user, password, host, port, None, "utf8mb4", False, None, None, None, None, None, None)
print("connection id known", executor.connection_id not in (None, -1))
print("server", executor.server_info.species.name)

done = threading.Event()
completers = []


def refreshed(completer):
    completers.append(completer)
    done.set()


refresher = CompletionRefresher()
refresher.refresh(executor, refreshed, {"smart_completion": True, "supported_formats": (), "keyword_casing": "auto"})
if not done.wait(60):
    sys.exit("the completion refresh did not finish")
c = completers[0]
print("databases", sorted(c.databases))
print("dbname", c.dbname)
for schema, tables in sorted(c.dbmetadata["tables"].items()):
    for table, columns in sorted(tables.items()):
        print("table", schema, table, columns)
print("functions", {s: sorted(f) for s, f in c.dbmetadata["functions"].items()})
print("users", sorted(c.users))
print("show items", len(c.show_items))
