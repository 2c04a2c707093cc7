# The binding tables t_order and t_order_item, sharded by user_id and
# order_id, an item's foreign key to its order (on the same data node);
# their AUTO_INCREMENT keys are what the proxy's key generator fills.
Sequel.migration do
  change do
    create_table(:t_order) do
      primary_key :order_id, type: :Bignum
      Integer :user_id, null: false
      String :status, size: 16
      BigDecimal :amount, size: [12, 2]
      index :user_id
    end
    create_table(:t_order_item) do
      primary_key :item_id, type: :Bignum
      foreign_key :order_id, :t_order, type: :Bignum, key: :order_id, null: false, foreign_key_constraint_name: :t_order_item_order_fk
      Integer :user_id, null: false
      String :sku, size: 20
      Integer :qty, null: false, default: 1
    end
  end
end
