# A column and an index added to the sharded table: DDL on every data node.
Sequel.migration do
  up do
    alter_table(:t_order) do
      add_column :note, String, size: 40
      add_index [:user_id, :status], name: :t_order_user_status
    end
  end
  down do
    alter_table(:t_order) do
      drop_index [:user_id, :status], name: :t_order_user_status
      drop_column :note
    end
  end
end
