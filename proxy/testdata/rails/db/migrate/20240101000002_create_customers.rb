# customers has no rules: a single table on the default data source.
class CreateCustomers < ActiveRecord::Migration[6.1]
  def change
    create_table :customers do |t|
      t.string :email, null: false
      t.string :name
      t.timestamps
    end
    add_index :customers, :email, unique: true
  end
end
