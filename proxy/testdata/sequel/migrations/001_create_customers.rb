# A table without rules: it lives on the default data source, with the
# server's AUTO_INCREMENT keys.
Sequel.migration do
  change do
    create_table(:sq_customer) do
      primary_key :id
      String :name, size: 40, null: false, unique: true
      Integer :tier, null: false, default: 0
    end
  end
end
