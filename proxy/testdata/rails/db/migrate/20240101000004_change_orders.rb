# Changes on the sharded table: every data node gets them.
class ChangeOrders < ActiveRecord::Migration[6.1]
  def up
    change_column :t_order, :amount, :decimal, precision: 22, scale: 6
    change_column_default :t_order, :status, from: nil, to: "new"
    rename_column :t_order, :note, :memo
    add_column :t_order, :meta, :json
    add_index :t_order, :happened_at
    remove_index :t_order, :happened_at
    rename_column :t_order, :memo, :note
  end

  def down
    remove_column :t_order, :meta
    change_column_default :t_order, :status, from: "new", to: nil
    change_column :t_order, :amount, :decimal, precision: 20, scale: 6
  end
end
