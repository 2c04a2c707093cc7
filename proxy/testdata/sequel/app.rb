# A small Sequel application (Debian's ruby-sequel 5.63 over the mysql2
# adapter), run by TestSequelApplication through the proxy over binding
# tables and directly on one MariaDB. It does what a Sequel application
# does on its default paths: Sequel.connect with a mysql2:// URL (SET NAMES,
# wait_timeout, SQL_AUTO_IS_NULL, the sql_mode it is given, the server's
# version), the integer Migrator up to the latest version, down one and up
# again (schema_info), reflection, then Sequel::Model and datasets. It
# prints one line per step; both runs must print the same.
#
# Keys the proxy generates (Snowflake) and MariaDB's AUTO_INCREMENT differ
# by nature: a generated key prints as o<n> (an order's) or i<n> (an
# item's), its rank among the keys of its table in the order the rows were
# made; both kinds of key grow in that order.
#
# Usage: ruby app.rb host port user password database

require "sequel"
require "bigdecimal"

host, port, user, password, $database = ARGV
url = "mysql2://#{user}:#{password}@#{host}:#{port}/#{$database}?encoding=utf8mb4"
DB = Sequel.connect(url, sql_mode: %w[STRICT_ALL_TABLES NO_ENGINE_SUBSTITUTION], max_connections: 2)
DB.logger = Logger.new($stderr) if ENV["SEQUEL_SQL_LOG"]
DB.extension :pagination
MIGRATIONS = File.join(__dir__, "migrations")

$labels = {}

# learn labels the keys of table it has not seen, in key order.
def learn(table, key, prefix)
  DB[table].order(key).select_map(key).each do |k|
    $labels[[prefix, k]] ||= "#{prefix}#{$labels.keys.count { |p, _| p == prefix } + 1}"
  end
end

def o(key) = $labels.fetch(["o", key], "?#{key}")
def it(key) = $labels.fetch(["i", key], "?#{key}")

def v(x)
  case x
  when nil then "nil"
  when BigDecimal then "d#{x.to_s("F")}"
  when Symbol then ":#{x}"
  when String then x.inspect
  when Array then "[#{x.map { |e| v(e) }.join(",")}]"
  when Hash then "{#{x.map { |k, e| "#{v(k)}=>#{v(e)}" }.join(",")}}"
  else x.inspect
  end
end

# message is an error's message with each run's own database name and
# generated keys taken out.
def message(m)
  m = m.gsub(/'(\d+)'/) { |q| (l = $labels.find { |(_, k), _| k == $1.to_i }) ? "'#{l[1]}'" : q }
  m.gsub("#{$database}.", "DB.").gsub("'#{$database}'", "'DB'").gsub("`#{$database}`", "`DB`")
end

def step(name)
  out = begin
    v(yield)
  rescue Sequel::DatabaseError => e
    cause = e.wrapped_exception
    number = cause.respond_to?(:error_number) ? cause.error_number : "-"
    state = cause.respond_to?(:sql_state) ? cause.sql_state : "-"
    "#{e.class.name} #{number} #{state} #{message(cause ? cause.message : e.message)}"
  end
  puts "#{name} | #{out}"
end

# Connect-time: what Sequel set and read.
step("session") { DB.fetch("SELECT @@SESSION.sql_mode AS m, @@SESSION.sql_auto_is_null AS a, @@SESSION.wait_timeout AS w, @@character_set_client AS c, @@collation_connection AS k").first.values }
step("server") { [DB.database_type, DB.mariadb?, DB.server_version >= 100000, DB.supports_savepoints?, DB.dataset.supports_cte?, DB.dataset.supports_window_functions?, DB.dataset.supports_nowait?] }
step("test_connection") { DB.test_connection }

# The integer Migrator: up to the latest, again (nothing to do), down one,
# up again.
Sequel.extension :migration
step("needs migration") { [Sequel::Migrator.is_current?(DB, MIGRATIONS), DB.table_exists?(:schema_info)] }
step("migrate") { Sequel::Migrator.run(DB, MIGRATIONS); DB[:schema_info].select_map(:version) }
step("migrate again") { Sequel::Migrator.run(DB, MIGRATIONS); [DB[:schema_info].select_map(:version), Sequel::Migrator.is_current?(DB, MIGRATIONS)] }
step("tables") { DB.tables.sort }
step("schema") { DB.schema(:t_order).map { |c, s| [c, s[:db_type], s[:type], s[:primary_key], s[:auto_increment], s[:allow_null], s[:default]] } }
step("indexes") { DB.indexes(:t_order).sort.to_h }
step("item indexes") { DB.indexes(:t_order_item).sort.to_h }
step("foreign keys") { [DB.foreign_key_list(:t_order_item), DB.foreign_key_list(:t_order)] }
step("customer schema") { DB.schema(:sq_customer).map { |c, s| [c, s[:db_type], s[:primary_key], s[:allow_null], s[:default]] } }
step("customer indexes") { DB.indexes(:sq_customer).sort.to_h }
step("migrate down") { Sequel::Migrator.run(DB, MIGRATIONS, target: 2); [DB[:schema_info].select_map(:version), DB.schema(:t_order, reload: true).map(&:first), DB.indexes(:t_order).keys.sort] }
step("migrate up") { Sequel::Migrator.run(DB, MIGRATIONS); [DB[:schema_info].select_map(:version), DB.schema(:t_order, reload: true).map(&:first), DB.indexes(:t_order).keys.sort] }
step("create_table?") { DB.create_table?(:sq_customer) { primary_key :id }; DB.table_exists?(:sq_customer) }

class Customer < Sequel::Model(:sq_customer)
  one_to_many :orders, key: :user_id
end

class Order < Sequel::Model(:t_order)
  many_to_one :customer, key: :user_id
  one_to_many :items, key: :order_id
end

class Item < Sequel::Model(:t_order_item)
  many_to_one :order, key: :order_id
end

step("model") { [Order.primary_key, Order.columns, Item.primary_key, Customer.primary_key] }

# A table without rules: the server's AUTO_INCREMENT keys on the default
# data source.
step("customers") { %w[ann bob cy dee].map { |n| Customer.create(name: n, tier: n.size).id } }
step("duplicate customer") { Customer.create(name: "ann") }
step("after duplicate") { Customer.order(:id).select_map([:id, :name]) }

# Orders without keys: the proxy's key generator fills them.
first = Order.create(user_id: 1, status: "new", amount: BigDecimal("5.25"), note: "first")
learn(:t_order, :order_id, "o")
step("create") { [o(first.order_id), first.user_id, first.amount, Order[first.order_id].note] }
id = DB[:t_order].insert(user_id: 2, status: "new", amount: 7, note: "insert")
learn(:t_order, :order_id, "o")
step("insert") { [o(id), DB[:t_order].where(order_id: id).get(:note), DB.get(Sequel.function(:last_insert_id)) == id] }
step("multi_insert") { DB[:t_order].multi_insert((1..12).map { |i| { user_id: 1 + i % 4, status: i.even? ? "paid" : "new", amount: 10 * i, note: "m#{i}" } }); Order.count }
step("import slice") { DB[:t_order].import([:user_id, :status, :amount, :note], (1..5).map { |i| [i, "imported", i, "s#{i}"] }, slice: 2); Order.count }
learn(:t_order, :order_id, "o")
step("import return") do
  ids = DB[:t_order].import([:user_id, :status, :amount], [[3, "ret", 1], [4, "ret", 2]], return: :primary_key)
  learn(:t_order, :order_id, "o")
  ids.map { |k| o(k) }
end
orders = DB[:t_order].order(:order_id).select_hash(:order_id, :user_id)
items = orders.each_with_index.flat_map { |(order, user), i| (1..(i % 3)).map { |q| { order_id: order, user_id: user, sku: "sku#{i}-#{q}", qty: q } } }
step("items") { DB[:t_order_item].multi_insert(items); Item.count }
learn(:t_order_item, :item_id, "i")
step("add_item") { item = Order[first.order_id].add_item(user_id: 1, sku: "added", qty: 9); learn(:t_order_item, :item_id, "i"); [it(item.item_id), item.order_id == first.order_id] }
step("counts") { [Order.count, Item.count, DB[:t_order_item].where(user_id: 1).count] }

# Selects: by key, by sharding column, ranges, ordering and pages.
step("by key") { o = Order[orders.keys[3]]; [o.user_id, o.status, o.amount, o.note] }
step("first where") { r = Order.first(user_id: 3, status: "paid"); [o(r.order_id), r.amount] }
step("where in") { Order.where(user_id: [1, 3]).where { amount >= 20 }.order(Sequel.desc(:amount), :order_id).select_map([:order_id, :amount]).map { |k, a| [o(k), a] } }
step("range") { Order.where(amount: 30..80).order(:amount).select_map(:amount) }
step("key range") { Order.where(order_id: orders.keys[2]..orders.keys[5]).order(:order_id).select_map(:order_id).map { |k| o(k) } }
step("like") { Order.where(Sequel.like(:note, "m1%")).order(:note).select_map(:note) }
step("exclude") { Order.exclude(status: %w[new paid]).order(:order_id).select_map(:status) }
step("limit offset") { Order.order(Sequel.desc(:amount), :order_id).limit(4, 3).select_map([:order_id, :amount]).map { |k, a| [o(k), a] } }
step("paginate") { ds = Order.order(:order_id).paginate(2, 5); [ds.page_count, ds.current_page, ds.pagination_record_count, ds.current_page_record_range, ds.select_map(:order_id).map { |k| o(k) }] }
step("each_page") do
  pages = []
  DB[:t_order].where(user_id: [1, 2]).order(:amount, :order_id).each_page(4) { |ds| pages << [ds.current_page, ds.last_page?, ds.map(:amount)] }
  pages
end
step("paged_each") { rows = []; Order.order(:order_id).paged_each(rows_per_fetch: 4) { |r| rows << o(r.order_id) }; rows }
step("paged_each offset") { rows = []; DB[:t_order].order(Sequel.desc(:amount), :order_id).paged_each(rows_per_fetch: 5, stream: false) { |r| rows << r[:amount].to_i }; rows }
step("paged_each filter") { rows = []; DB[:t_order].order(:order_id).paged_each(rows_per_fetch: 6, stream: false, strategy: :filter) { |r| rows << o(r[:order_id]) }; rows }
step("stream") { DB[:t_order].order(:order_id).stream.map { |r| [o(r[:order_id]), r[:user_id]] } }
step("stream break") { n = 0; DB[:t_order_item].order(:item_id).stream.each { |r| n += r[:qty]; break if n > 5 }; [n, Item.count] }

# Aggregates.
step("count sum max") { [Order.count, Order.sum(:amount), Order.max(:amount), Order.min(:note), Order.where(user_id: 2).avg(:amount).round(4)] }
step("group_and_count") { Order.group_and_count(:user_id).order(:user_id).all.map(&:values) }
step("group sum") { DB[:t_order].group(:status).select(:status) { sum(:amount).as(:total) }.order(:status).all }
step("having") { DB[:t_order].group(:user_id).having { sum(:amount) > 100 }.select(:user_id) { count.function.*.as(:n) }.order(:user_id).all }
step("distinct") { Order.distinct.order(:status).select_map(:status) }
step("item sums") { DB[:t_order_item].group(:order_id).select(:order_id) { sum(:qty).as(:q) }.order(Sequel.desc(:q), :order_id).limit(3).all.map { |r| [o(r[:order_id]), r[:q].to_i] } }

# Associations, lazily and eagerly (one query per association).
step("association") { Order[first.order_id].items_dataset.order(:item_id).select_map(:sku) }
step("many_to_one") { Item.order(:item_id).first.order.note }
step("eager") do
  Order.where(user_id: 2).eager(:items, :customer).order(:order_id).all.map do |r|
    [o(r.order_id), r.customer&.name, r.items.map(&:sku).sort]
  end
end
step("customer orders") { Customer.order(:id).eager(:orders).all.map { |c| [c.name, c.orders.size] } }
# eager_graph is a JOIN of the binding tables on their foreign key.
step("eager_graph") do
  Order.where(Sequel[:t_order][:user_id] => 3).eager_graph(:items).order(Sequel[:t_order][:order_id], Sequel[:items][:item_id]).all.map { |r| [o(r.order_id), r.items.map(&:qty)] }
end

# Transactions: committed, rolled back, nested with a savepoint.
step("commit") do
  DB.transaction do
    k = DB[:t_order].insert(user_id: 3, status: "tx", amount: 1)
    DB[:t_order_item].insert(order_id: k, user_id: 3, sku: "tx", qty: 1)
  end
  learn(:t_order, :order_id, "o")
  [Order.where(status: "tx").count, Item.where(sku: "tx").count]
end
step("rollback") do
  DB.transaction do
    DB[:t_order].insert(user_id: 1, status: "rb", amount: 1)
    DB[:t_order].insert(user_id: 2, status: "rb", amount: 2)
    Customer.where(name: "ann").update(tier: 99)
    raise Sequel::Rollback
  end
  [Order.where(status: "rb").count, Customer.first(name: "ann").tier]
end
step("savepoint") do
  DB.transaction do
    DB[:t_order].insert(user_id: 1, status: "sp-out", amount: 1)
    DB.transaction(savepoint: true) do
      DB[:t_order].insert(user_id: 2, status: "sp-in", amount: 2)
      raise Sequel::Rollback
    end
    DB[:t_order].insert(user_id: 3, status: "sp-out", amount: 3)
  end
  learn(:t_order, :order_id, "o")
  [Order.where(status: "sp-out").count, Order.where(status: "sp-in").count]
end
step("for_update") { DB.transaction { Order.where(user_id: 4).for_update.order(:order_id).select_map(:amount) } }
step("error in transaction") do
  DB.transaction do
    DB[:t_order].insert(user_id: 1, status: "lost", amount: 1)
    DB[:t_order].insert(order_id: first.order_id, user_id: 1, status: "dup")
  end
rescue Sequel::UniqueConstraintViolation => e
  [e.class.name, e.wrapped_exception.error_number, Order.where(status: "lost").count, DB.in_transaction?]
end

# Upserts and the unique error.
step("duplicate key") { DB[:t_order].insert(order_id: first.order_id, user_id: 1, status: "dup") }
step("insert_ignore") { DB[:t_order].insert_ignore.insert(order_id: first.order_id, user_id: 1, status: "dup"); Order[first.order_id].status }
step("on_duplicate_key_update") do
  DB[:t_order].on_duplicate_key_update(:status, amount: Sequel[:amount] + 1).insert(order_id: first.order_id, user_id: 1, status: "upserted", amount: 0)
  Order[first.order_id].values.values_at(:status, :amount)
end
step("multi upsert") do
  DB[:t_order].on_duplicate_key_update(:note).import([:order_id, :user_id, :note], [[first.order_id, 1, "both"], [orders.keys[1], orders.values[1], "both"]])
  Order.where(note: "both").count
end

# Prepared statements (native, mysql2's prepare).
ps = DB[:t_order].where(user_id: :$u).where { amount > :$min }.order(:order_id).select(:order_id, :amount).prepare(:select, :orders_of)
step("prepared select") { ps.call(u: 2, min: 20).map { |r| [o(r[:order_id]), r[:amount]] } }
step("prepared again") { DB.call(:orders_of, u: 3, min: 0).size }
ins = DB[:t_order].prepare(:insert, :new_order, user_id: :$u, status: :$s, amount: :$a)
step("prepared insert") do
  k = ins.call(u: 4, s: "prep", a: 3)
  learn(:t_order, :order_id, "o")
  [o(k), Order[k].status]
end
step("prepared first") { DB[:t_order].where(order_id: :$k).prepare(:first, :order_by_key).call(k: first.order_id)[:status] }
step("prepared update") { DB[:t_order].where(order_id: :$k).prepare(:update, :set_note, note: :$n).call(k: first.order_id, n: "prepared") }

# Model and dataset paths with LIMIT and locks: lock! reads the row FOR
# UPDATE, refresh reloads it (SELECT ... LIMIT 1), a limited dataset
# update or delete is UPDATE/DELETE ... LIMIT over every data node.
step("find_or_create") { c = Customer.find_or_create(name: "eve") { |n| n.tier = 7 }; [c.id, c.tier, Customer.find_or_create(name: "eve").id == c.id] }
step("lock!") { DB.transaction { r = Order[first.order_id]; r.lock!; r.update(note: "locked"); Order[first.order_id].note } }
step("refresh") { r = Order[orders.keys[4]]; DB[:t_order].where(order_id: orders.keys[4]).update(note: "behind"); [r.note, r.refresh.note] }
step("limited update") { [DB[:t_order].where(status: "new").limit(2).update(note: "lim"), DB[:t_order].where(note: "lim").count] }
step("parent row") { DB[:t_order].where(order_id: first.order_id).delete }
# The items first: a subquery on the binding table, which the proxy
# evaluates before the DELETE.
step("limited delete") { [DB[:t_order_item].where(order_id: DB[:t_order].where(status: "ret").select(:order_id)).delete, DB[:t_order].where(status: "ret").limit(1).delete, DB[:t_order].where(status: "ret").count] }
step("isolation") { DB.transaction(isolation: :serializable) { Order.where(user_id: 1).count } }
step("new save") { r = Order.new(user_id: 2, status: "saved", amount: 1); r.save; learn(:t_order, :order_id, "o"); [o(r.order_id), r.exists?, Order.where(status: "saved").count] }

# Updates and deletes.
step("update") { [Order.where(user_id: 1).update(status: "one"), Order.where(user_id: 1, status: "one").count] }
step("model save") { r = Order[orders.keys[2]]; r.update(note: "saved", amount: 0); Order[orders.keys[2]].values.values_at(:note, :amount) }
step("destroy") { Order[orders.keys[0]].items_dataset.delete + (Order[orders.keys[0]].destroy.exists? ? 1 : 0) }
step("delete") { [Item.where(order_id: Order.where(status: "imported").select(:order_id)).delete, Order.where(status: "imported").delete, Order.count, Item.count] }
step("unknown column") { DB[:t_order].where(nope: 1).all }
step("still usable") { [Order.where(user_id: 2).count, DB.get(1)] }
