module github.com/shardflake/shardflake

go 1.26.8
