# t_order is sharded by the proxy's rules: user_id picks the data source,
# order_id (the key the proxy generates when the application gives none)
# the table.
class CreateOrders < ActiveRecord::Migration[6.1]
  def change
    create_table :t_order, primary_key: :order_id do |t|
      t.integer :user_id, null: false
      t.string :status, limit: 32
      t.decimal :amount, precision: 20, scale: 6
      t.datetime :happened_at, precision: 6
      t.text :note
      t.binary :payload
      t.integer :lock_version, null: false, default: 0
      t.timestamps
    end
    add_index :t_order, [:user_id, :status]
  end
end
