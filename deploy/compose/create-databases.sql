-- Run once by the postgres image on an empty data directory
-- (/docker-entrypoint-initdb.d): the databases of deploy/compose.yaml.
-- Server A holds the catalog, the read database and shards 0–1; server B
-- (create-databases-b.sql) shards 2–3.
CREATE DATABASE seatghor_catalog;
CREATE DATABASE seatghor_read;
CREATE DATABASE seatghor_shard0;
CREATE DATABASE seatghor_shard1;
