-- Server B of deploy/compose.yaml: shards 2–3.
CREATE DATABASE seatghor_shard2;
CREATE DATABASE seatghor_shard3;
