DROP TABLE tombstones;
