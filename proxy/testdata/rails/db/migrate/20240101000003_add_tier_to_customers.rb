class AddTierToCustomers < ActiveRecord::Migration[6.1]
  def change
    add_column :customers, :tier, :integer, default: 1
    change_column_null :customers, :name, false, "anonymous"
  end
end
