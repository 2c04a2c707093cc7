module github.com/shardflake/shardflake

go 1.26.8

require gopkg.in/yaml.v3 v3.0.1 // indirect
