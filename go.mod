module github.com/shardflake/shardflake

go 1.26.8

require github.com/go-sql-driver/mysql v1.9.3

require filippo.io/edwards25519 v1.2.0 // indirect
