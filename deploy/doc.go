// Package deploy holds no code. Its directory has what runs shardflake with
// Docker Compose (docker-compose.yml at the top level): the rules file the
// compose proxy serves, the MySQL init SQL, the Prometheus configuration
// and the Grafana provisioning and dashboard. Its tests check those files
// against the repository, since no Docker engine runs where the tests do.
package deploy
