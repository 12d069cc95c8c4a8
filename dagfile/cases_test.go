package dagfile

// head is a valid dagfile prefix that the malformed cases complete.
const head = `version: 1
connections:
  lake: iceberg://?catalog=sql
  app: ${APP_PG_URL}
tasks:
`

// malformed are dagfiles with their exact error messages (path testdata/weir.yaml).
var malformed = []struct {
	name string
	yaml string
	want []string
}{
	{"unknown top key", "version: 1\nconnections: {lake: file:///x}\ntaks: {}\n", []string{
		"testdata/weir.yaml:1:1: tasks: tasks is required: add at least one transfer, model or stream task",
		"testdata/weir.yaml:3:1: taks: unknown key \"taks\" (did you mean \"tasks\"?); allowed: version, name, description, schedule, connections, defaults, deploy, tasks",
	}},
	{"unknown task key", head + "  a:\n    model: {source: app:public.x, sink: lake:s.a, sql: SELECT 1}\n    dep: [b]\n", []string{
		"testdata/weir.yaml:8:5: tasks.a.dep: unknown key \"dep\" (did you mean \"deps\"?); allowed: transfer, model, stream, description, deps, tags, retries, retry_delay, timeout, pool, contract, deploy, backfill",
	}},
	{"unknown model key", head + "  a:\n    model: {source: app:public.x, sink: lake:s.a, sqll: SELECT 1}\n", []string{
		"testdata/weir.yaml:7:5: tasks.a.model: model needs sql: (inline SQL) or sql_file: (a .sql file relative to the dagfile)",
		"testdata/weir.yaml:7:51: tasks.a.model.sqll: unknown key \"sqll\" (did you mean \"sql\"?); allowed: source, sources, lookup, cursor, sink, mode, key, sql, sql_file, start, max_batch_rows, on_change, independent, aggregate",
	}},
	{"aggregate: unknown function, count_distinct merged, sum(*)", head + "  a:\n    model:\n      source: app:public.x\n      sink: lake:s.a\n      sql: SELECT 1\n      aggregate:\n        group_by: [k]\n        measures:\n          n: cnt(x)\n          d: count_distinct(x)\n          s: sum(*)\n          e: x + 1\n          ok: {agg: max(x), type: BIGINT}\n", []string{
		"testdata/weir.yaml:14:14: tasks.a.model.aggregate.measures.n: measure n: unknown function \"cnt\"; allowed: sum, count, min, max, avg, count_distinct",
		"testdata/weir.yaml:15:14: tasks.a.model.aggregate.measures.d: measure d: count_distinct does not merge (the distinct values of earlier batches are not kept): use mode: replace, which recomputes the whole table each run",
		"testdata/weir.yaml:16:14: tasks.a.model.aggregate.measures.s: measure s: sum(*) is not a measure; only count(*) takes *",
		"testdata/weir.yaml:17:14: tasks.a.model.aggregate.measures.e: measure e: \"x + 1\" is not function(column): use sum, count, min, max, avg, count_distinct over one column of the SQL's output (count(*) counts rows)",
	}},
	{"aggregate: append, key, no measures", head + "  a:\n    model: {source: app:public.x, sink: lake:s.a, sql: SELECT 1, mode: append, key: [k], aggregate: {group_by: [k]}}\n", []string{
		"testdata/weir.yaml:7:72: tasks.a.model.mode: an aggregate is upsert (merged into the stored groups) or replace (recomputed); not append",
		"testdata/weir.yaml:7:80: tasks.a.model.key: with aggregate:, the key is group_by; drop key:",
		"testdata/weir.yaml:7:80: tasks.a.model.key: key is used only by mode upsert (mode is append)",
		"testdata/weir.yaml:7:90: tasks.a.model.aggregate: aggregate needs measures: {name: sum(column) | count(*) | count(column) | min(column) | max(column) | avg(column)}",
	}},
	{"unknown connection in sink", head + "  a:\n    model: {source: app:public.x, sink: lak:s.a, sql: SELECT 1}\n", []string{
		"testdata/weir.yaml:7:41: tasks.a.model.sink: unknown connection \"lak\" (did you mean \"lake\"?); defined: app, lake",
	}},
	{"unknown connection in transfer", head + "  a:\n    transfer: {from: ap, table: public.x, to: lake}\n", []string{
		"testdata/weir.yaml:7:22: tasks.a.transfer.from: unknown connection \"ap\" (did you mean \"app\"?); defined: app, lake",
	}},
	{"cycle through deps", head + "  a:\n    model: {source: app:public.x, sink: lake:s.a, sql: SELECT 1}\n    deps: [b]\n  b:\n    model: {source: app:public.y, sink: lake:s.b, sql: SELECT 1}\n    deps: [a]\n", []string{
		"testdata/weir.yaml:6:3: tasks.a: dependency cycle: a → b → a (b deps on a; a deps on b); remove one of these dependencies",
	}},
	{"cycle through lineage", head + "  b:\n    model: {source: lake:s.c, sink: lake:s.b, sql: SELECT 1}\n  c:\n    model: {source: lake:s.b, sink: lake:s.c, sql: SELECT 1}\n  a:\n    model: {source: lake:s.c, sink: lake:s.a, sql: SELECT 1}\n    deps: [a]\n", []string{
		"testdata/weir.yaml:6:3: tasks.b: dependency cycle: b → c → b (c reads lake:s.b; b reads lake:s.c); remove one of these dependencies",
		"testdata/weir.yaml:10:3: tasks.a: dependency cycle: a → a (a deps on a); remove one of these dependencies",
	}},
	{"model without sql", head + "  a:\n    model: {source: app:public.x, sink: lake:s.a}\n", []string{
		"testdata/weir.yaml:7:5: tasks.a.model: model needs sql: (inline SQL) or sql_file: (a .sql file relative to the dagfile)",
	}},
	{"model with sql and sql_file", head + "  a:\n    model: {source: app:public.x, sink: lake:s.a, sql: SELECT 1, sql_file: models/ok.sql}\n", []string{
		"testdata/weir.yaml:7:51: tasks.a.model.sql: sql and sql_file are exclusive: keep one",
	}},
	{"sql_file not found", head + "  a:\n    model: {source: app:public.x, sink: lake:s.a, sql_file: models/nope.sql}\n", []string{
		"testdata/weir.yaml:7:61: tasks.a.model.sql_file: sql_file \"models/nope.sql\" not found (looked for testdata/models/nope.sql; paths are relative to the dagfile)",
	}},
	{"bad model mode", head + "  a:\n    model: {source: app:public.x, sink: lake:s.a, sql: SELECT 1, mode: upsret}\n", []string{
		"testdata/weir.yaml:7:72: tasks.a.model.mode: bad mode \"upsret\" (did you mean \"upsert\"?); allowed: append, upsert, replace",
	}},
	{"bad transfer mode", head + "  a:\n    transfer: {from: app, table: public.x, to: lake, mode: incremental}\n", []string{
		"testdata/weir.yaml:7:60: tasks.a.transfer.mode: bad mode \"incremental\"; allowed: replace, append, merge, log_based",
	}},
	{"upsert without key", head + "  a:\n    model: {source: app:public.x, sink: lake:s.a, sql: SELECT 1, mode: upsert}\n", []string{
		"testdata/weir.yaml:7:72: tasks.a.model.mode: mode upsert needs key: (the columns that identify a row)",
	}},
	{"key without upsert", head + "  a:\n    model: {source: app:public.x, sink: lake:s.a, sql: SELECT 1, key: [id]}\n", []string{
		"testdata/weir.yaml:7:66: tasks.a.model.key: key is used only by mode upsert (mode is append)",
	}},
	{"duplicate sink writer", head + "  a:\n    transfer: {from: app, table: public.x, to: lake, dest_table: s.x}\n  b:\n    model: {source: app:public.y, sink: lake:S.X, sql: SELECT 1}\n", []string{
		"testdata/weir.yaml:9:41: tasks.b.model.sink: sink lake:S.X is also written by task a: a table has one writer (merge the tasks, or write another table)",
	}},
	{"bad duration", head + "  a:\n    transfer: {from: app, table: public.x, to: lake}\n    retry_delay: 60\n    timeout: 1 minute\n", []string{
		"testdata/weir.yaml:8:18: tasks.a.retry_delay: bad duration \"60\": use a number with a unit (s, m, h), e.g. 90s, 5m or 1h30m",
		"testdata/weir.yaml:9:14: tasks.a.timeout: bad duration \"1 minute\": use a number with a unit (s, m, h), e.g. 90s, 5m or 1h30m",
	}},
	{"bad table address", head + "  a:\n    model: {source: lake/s.x, sink: 'lake:', sql: SELECT 1}\n  b:\n    model: {source: lake:s..x, sink: lake:s.b, sql: SELECT 1}\n", []string{
		"testdata/weir.yaml:7:21: tasks.a.model.source: bad table address \"lake/s.x\": write connection:schema.table, e.g. lake:silver.orders",
		"testdata/weir.yaml:7:37: tasks.a.model.sink: bad table address \"lake:\": the table name is empty",
		"testdata/weir.yaml:9:21: tasks.b.model.source: bad table address \"lake:s..x\": table \"s..x\": empty name part",
	}},
	{"malformed transfer tables", head + "  a:\n    transfer: {from: app, table: a.b.c.d, to: lake, dest_table: 'x..y'}\n  b:\n    transfer: {from: app, tables: [s., '\"open'], to: lake, schema: a.b}\n", []string{
		"testdata/weir.yaml:7:34: tasks.a.transfer.table: bad table name: table \"a.b.c.d\": 4 name parts, want schema.table or table (quote a name that holds a dot)",
		"testdata/weir.yaml:7:65: tasks.a.transfer.dest_table: bad table name: table \"x..y\": empty name part",
		"testdata/weir.yaml:9:36: tasks.b.transfer.tables[0]: bad table name: table \"s.\": empty name part",
		"testdata/weir.yaml:9:40: tasks.b.transfer.tables[1]: bad table name: table \"\\\"open\": unclosed quote",
		"testdata/weir.yaml:9:68: tasks.b.transfer.schema: bad schema name: schema \"a.b\": want one name (quote a name that holds a dot)",
	}},
	{"no kind", head + "  a:\n    retries: 1\n", []string{
		"testdata/weir.yaml:6:3: tasks.a: a task needs one of transfer:, model: or stream:",
	}},
	{"two kinds", head + "  a:\n    transfer: {from: app, table: public.x, to: lake}\n    model: {source: app:public.x, sink: lake:s.a, sql: SELECT 1}\n", []string{
		"testdata/weir.yaml:8:5: tasks.a.model: a task has exactly one of transfer, model, stream: found transfer and model",
	}},
	{"version missing", "connections: {lake: file:///x}\ntasks:\n  a: {transfer: {from: lake, table: x.csv, to: lake, dest_table: y}}\n", []string{
		"testdata/weir.yaml:1:1: version: version is required: add version: 1 at the top",
	}},
	{"version 2", "version: 2\nconnections: {lake: file:///x}\ntasks:\n  a: {transfer: {from: lake, table: x.csv, to: lake, dest_table: y}}\n", []string{
		"testdata/weir.yaml:1:10: version: unsupported version 2: this weir reads version 1",
	}},
	{"bad schedule", head + "  a: {transfer: {from: app, table: public.x, to: lake}}\nschedule: every hour\n", []string{
		"testdata/weir.yaml:7:11: schedule: bad schedule \"every hour\": use a five-field cron expression (\"*/15 * * * *\") or one of @hourly, @daily, @weekly, @monthly, @yearly",
	}},
	{"schedule twice", head + "  a: {transfer: {from: app, table: public.x, to: lake}}\nschedule: '@daily'\ndefaults: {schedule: '@hourly'}\n", []string{
		"testdata/weir.yaml:8:12: defaults.schedule: schedule is set twice (also at line 7): keep one",
	}},
	{"unknown dep", head + "  a:\n    transfer: {from: app, table: public.x, to: lake}\n    deps: [bb]\n  b:\n    transfer: {from: app, table: public.y, to: lake}\n", []string{
		"testdata/weir.yaml:8:11: tasks.a.deps: unknown task \"bb\" (did you mean \"b\"?); tasks: a, b",
	}},
	{"bad names", "version: 1\nconnections: {Lake: file:///x}\ntasks:\n  Silver-Orders: {transfer: {from: lake, table: x, to: lake}}\n", []string{
		"testdata/weir.yaml:2:15: connections.Lake: connection name \"Lake\" is not allowed: use lowercase letters, digits and _, starting with a letter (at most 63)",
		"testdata/weir.yaml:4:3: tasks.Silver-Orders: task name \"Silver-Orders\" is not allowed: use lowercase letters, digits and _, starting with a letter (at most 63)",
	}},
	{"bad yaml", "version: 1\ntasks: [a\n", []string{
		"testdata/weir.yaml:1:1: bad YAML: did not find expected ',' or ']'",
	}},
	{"empty", "", []string{
		"testdata/weir.yaml:1:1: the dagfile is empty: it needs version: 1, connections: and tasks:",
	}},
	{"repeated key", head + "  a: {transfer: {from: app, table: public.x, to: lake}}\n  a: {transfer: {from: app, table: public.y, to: lake}}\n", []string{
		"testdata/weir.yaml:7:3: tasks.a: key \"a\" is repeated (first at line 6)",
	}},
	{"merge key", head + "  a: &t {transfer: {from: app, table: public.x, to: lake}}\n  b:\n    <<: *t\n", []string{
		"testdata/weir.yaml:7:3: tasks.b: a task needs one of transfer:, model: or stream:",
		"testdata/weir.yaml:8:5: tasks.b.<<: YAML merge keys (<<) are not supported; use defaults: for shared settings",
	}},
	{"bad start and ints", head + "  a:\n    model: {source: app:public.x, sink: lake:s.a, sql: SELECT 1, start: yesterday, max_batch_rows: 0, on_change: fail}\n    retries: -1\n", []string{
		"testdata/weir.yaml:7:73: tasks.a.model.start: bad start \"yesterday\": use earliest, latest or an offset (an integer ≥ 0)",
		"testdata/weir.yaml:7:100: tasks.a.model.max_batch_rows: expected an integer ≥ 1, got \"0\"",
		"testdata/weir.yaml:7:114: tasks.a.model.on_change: bad on_change \"fail\"; allowed: warn, error, ignore",
		"testdata/weir.yaml:8:14: tasks.a.retries: expected an integer ≥ 0, got \"-1\"",
	}},
	{"transfer options", head + "  a:\n    transfer: {from: app, table: public.x, tables: [public.y], to: lake}\n  b:\n    transfer: {from: app, tables: [public.y], to: lake, dest_table: z, mode: replace, cursor: id, changelog: yes, parallel: 0, chunk_bytes: 4 lots}\n", []string{
		"testdata/weir.yaml:7:27: tasks.a.transfer.table: table and tables are exclusive: use table: for one table, tables: for several",
		"testdata/weir.yaml:9:57: tasks.b.transfer.dest_table: dest_table names one table: with tables:, set schema: for the destination schema",
		"testdata/weir.yaml:9:87: tasks.b.transfer.cursor: cursor is used only by mode append or merge (mode is replace)",
		"testdata/weir.yaml:9:99: tasks.b.transfer.changelog: changelog is used only by mode log_based (mode is replace)",
		"testdata/weir.yaml:9:110: tasks.b.transfer.changelog: expected true or false, got \"yes\"",
		"testdata/weir.yaml:9:125: tasks.b.transfer.parallel: expected an integer ≥ 1, got \"0\"",
		"testdata/weir.yaml:9:141: tasks.b.transfer.chunk_bytes: bad size \"4 lots\": use bytes or a number with a unit, e.g. 4MiB, 512KiB, 64MB",
	}},
	{"transfer needs", head + "  a:\n    transfer: {table: public.x}\n", []string{
		"testdata/weir.yaml:7:5: tasks.a.transfer: transfer needs from: (the source connection)",
		"testdata/weir.yaml:7:5: tasks.a.transfer: transfer needs to: (the destination connection)",
	}},
	{"stream options", head + "  a:\n    stream: {source: http://x/events, sink: lake:s.a, trigger: always, materialization: merge}\n  b:\n    stream: {source: nope, sink: lake:s.b, key: [id], batch_size: 0}\n", []string{
		"testdata/weir.yaml:7:22: tasks.a.stream.source: stream source scheme \"http\" is not a stream; allowed: sse, sse+http, sse+https, ws, wss, kafka, pubsub, sqs",
		"testdata/weir.yaml:7:64: tasks.a.stream.trigger: bad trigger \"always\"; allowed: available_now, continuous",
		"testdata/weir.yaml:7:89: tasks.a.stream.materialization: materialization merge needs key: (the columns that identify an event)",
		"testdata/weir.yaml:9:22: tasks.b.stream.source: unknown connection \"nope\"; defined: app, lake",
		"testdata/weir.yaml:9:44: tasks.b.stream.key: key is used only by materialization merge (materialization is append)",
		"testdata/weir.yaml:9:67: tasks.b.stream.batch_size: expected an integer ≥ 1, got \"0\"",
	}},
	{"stream reconnects and window", head + "  a:\n    stream: {source: 'sse://h/x', sink: lake:s.a, reconnect_attempts: 0, min_events: 0}\n", []string{
		"testdata/weir.yaml:7:71: tasks.a.stream.reconnect_attempts: expected an integer ≥ 1, got \"0\"",
		"testdata/weir.yaml:7:86: tasks.a.stream.min_events: expected an integer ≥ 1, got \"0\"",
	}},
	{"stream table source", head + "  a:\n    stream: {source: app, table: public.orders, sink: lake:s.a, chunk_size: 0, batch_size: 5}\n  b:\n    stream: {source: app, table: public.orders, sink: lake:s.b}\n  c:\n    stream: {source: 'kafka://h/t', sink: lake:s.c, chunk_size: 10}\n  d:\n    stream: {source: 'mysql://h/db', table: '', cursor: id, sink: lake:s.d}\n  e:\n    stream: {source: 'sse://h/x', table: x.y, cursor: id, sink: lake:s.e}\n  f:\n    stream: {source: 'postgres://h/db', sink: lake:s.f}\n", []string{
		"testdata/weir.yaml:7:5: tasks.a.stream: stream needs cursor: (the column a table source pages on: an integer or timestamp column that grows with new rows)",
		"testdata/weir.yaml:7:77: tasks.a.stream.chunk_size: expected an integer ≥ 1, got \"0\"",
		"testdata/weir.yaml:7:80: tasks.a.stream.batch_size: batch_size is for event sources: a table source commits one chunk of chunk_size rows at a time",
		"testdata/weir.yaml:9:5: tasks.b.stream: stream needs cursor: (the column a table source pages on: an integer or timestamp column that grows with new rows)",
		"testdata/weir.yaml:11:53: tasks.c.stream.chunk_size: chunk_size is used only by a table source (with table:); an event source commits batch_size events",
		"testdata/weir.yaml:13:22: tasks.d.stream.source: stream source scheme \"mysql\" is not a stream; allowed: sse, sse+http, sse+https, ws, wss, kafka, pubsub, sqs (to read a SQL table in chunks, add table: and cursor:)",
		"testdata/weir.yaml:13:45: tasks.d.stream.table: expected a string, got \"\"",
		"testdata/weir.yaml:15:22: tasks.e.stream.source: a table source reads postgres, mysql or clickhouse, not \"sse\"; allowed: postgres, postgresql, mysql, mariadb, clickhouse, clickhouse+http, clickhouse+https",
		"testdata/weir.yaml:17:22: tasks.f.stream.source: stream source scheme \"postgres\" is not a stream; allowed: sse, sse+http, sse+https, ws, wss, kafka, pubsub, sqs (to read a SQL table in chunks, add table: and cursor:)",
	}},
	{"contract inline", head + "  a:\n    model: {source: app:public.x, sink: lake:s.a, sql: SELECT 1}\n    contract:\n      columns: [{name: id}, {type: INT}, {name: id}]\n      rules:\n        - not_null: [idx]\n        - {unique: [id], sql: id > 0}\n        - range: {column: id}\n        - regex: {column: id, pattern: '(('}\n        - accepted_values: {column: id}\n      max_bad_ratio: lots\n", []string{
		"testdata/weir.yaml:9:29: tasks.a.contract.columns[1]: a column needs name:",
		"testdata/weir.yaml:9:42: tasks.a.contract.columns[2]: column \"id\" is listed twice",
		"testdata/weir.yaml:11:11: tasks.a.contract.rules: rule not_null names column \"idx\", which is not in columns (did you mean \"id\"?); allowed: id",
		"testdata/weir.yaml:12:11: tasks.a.contract.rules[1]: a rule has exactly one of not_null, unique, accepted_values, range, regex, sql: found unique and sql",
		"testdata/weir.yaml:13:11: tasks.a.contract.rules[2].range: range needs min:, max: or both",
		"testdata/weir.yaml:14:40: tasks.a.contract.rules[3].regex.pattern: bad pattern \"((\": error parsing regexp: missing closing ): `((`",
		"testdata/weir.yaml:15:11: tasks.a.contract.rules[4].accepted_values: accepted_values needs values: [a, b, …]",
		"testdata/weir.yaml:16:22: tasks.a.contract.max_bad_ratio: bad max_bad_ratio \"lots\": use a number between 0 and 1, e.g. 0.01",
	}},
	{"contract on transfer", head + "  a:\n    transfer: {from: app, table: public.x, to: lake}\n    contract: contracts/ok.yaml\n", []string{
		"testdata/weir.yaml:8:5: tasks.a.contract: contract is allowed on model and stream tasks only (the transfer copies tables as they are)",
	}},
	{"contract file", head + "  a:\n    model: {source: app:public.x, sink: lake:s.a, sql: SELECT 1}\n    contract: contracts/bad.yaml\n  b:\n    model: {source: app:public.y, sink: lake:s.b, sql: SELECT 1}\n    contract: contracts/nope.yaml\n", []string{
		"testdata/weir.yaml:11:15: tasks.b.contract: contract file \"contracts/nope.yaml\" not found (looked for testdata/contracts/nope.yaml; paths are relative to the dagfile)",
		"testdata/contracts/bad.yaml:2:30: columns[0].requird: unknown key \"requird\" (did you mean \"required\"?); allowed: name, type, required",
		"testdata/contracts/bad.yaml:4:5: rules: rule unique names column \"idd\", which is not in columns (did you mean \"id\"?); allowed: id",
		"testdata/contracts/bad.yaml:5:16: max_bad_ratio: bad max_bad_ratio \"1.5\": use a number between 0 and 1, e.g. 0.01",
	}},
	{"connection syntax", "version: 1\nconnections:\n  a: postgres://${PG\n  b: ${1X}\n  c: [x]\ntasks:\n  t: {transfer: {from: a, table: x, to: b}}\n", []string{
		"testdata/weir.yaml:3:6: connections.a: unterminated ${ at offset 11: write ${NAME} (and $$ for a literal $)",
		"testdata/weir.yaml:4:6: connections.b: bad variable name \"1X\" in ${…}: use letters, digits and _",
		"testdata/weir.yaml:5:6: connections.c: expected a URL (${VAR} references are expanded from the environment), got a list",
	}},
	{"model cursor and lookup", head + "  a:\n    model: {source: app:public.x, sink: lake:s.a, sql: SELECT 1, cursor: [a, b], lookup: [x]}\n" +
		"  b:\n    model: {sources: {o: app:public.o, c: app:public.c}, sink: lake:s.b, sql: SELECT 1, cursor: updated_at, lookup: {cc: id}}\n" +
		"  c:\n    model: {sources: {o: app:public.o, c: app:public.c}, sink: lake:s.c, sql: SELECT 1, cursor: {c: updated_at, x: id}, lookup: {c: id}}\n" +
		"  d:\n    model: {sources: {o: app:public.o, this: app:public.t}, sink: lake:s.d, sql: SELECT 1, lookup: {o: id}}\n" +
		"  e:\n    model: {source: app:public.e, sink: lake:s.e, sql: SELECT 1, mode: replace, cursor: updated_at}\n", []string{
		"testdata/weir.yaml:7:74: tasks.a.model.cursor: expected a column name (the cursor of source:), got a list",
		"testdata/weir.yaml:7:82: tasks.a.model.lookup: lookup names sources of sources: (a model with source: reads one table incrementally)",
		"testdata/weir.yaml:9:13: tasks.b.model.sources: sources c, o are all read incrementally: a join would see only the new rows of each side, and rows whose match arrived in another run are lost; declare all but one as lookup: {name: {key: [column]}} (read whole every run), or use mode: replace (re-read fully); a SQL that never joins them (a UNION ALL) declares independent: true",
		"testdata/weir.yaml:9:97: tasks.b.model.cursor: with sources:, cursor is a mapping of source names to columns, e.g. {o: updated_at}",
		"testdata/weir.yaml:9:118: tasks.b.model.lookup.cc: lookup \"cc\" is not a source (did you mean \"c\"?); allowed: c, o",
		"testdata/weir.yaml:11:98: tasks.c.model.cursor.c: source \"c\" is a lookup (read whole every run): it has no cursor",
		"testdata/weir.yaml:11:113: tasks.c.model.cursor.x: cursor for \"x\", which is not a source; allowed: c, o",
		"testdata/weir.yaml:13:40: tasks.d.model.sources.this: source name \"this\" is taken: the view this is the model's own sink; pick another name",
		"testdata/weir.yaml:13:100: tasks.d.model.lookup: every source is a lookup: nothing is read incrementally; keep one source out of lookup, or use mode: replace",
		"testdata/weir.yaml:15:81: tasks.e.model.cursor: cursor is used only by mode append or upsert (mode is replace)",
	}},
	{"model joins", head +
		"  a:\n    model: {sources: {o: app:public.o, c: app:public.c}, sink: lake:s.a, sql: SELECT 1}\n" +
		"  b:\n    model: {sources: {o: app:public.o, c: app:public.c, r: app:public.r}, lookup: {r: id}, sink: lake:s.b, sql: SELECT 1}\n" +
		"  c:\n    model: {sources: {o: app:public.o, c: app:public.c}, lookup: [c], mode: upsert, key: id, sink: lake:s.c, sql: SELECT 1}\n" +
		"  d:\n    model: {sources: {o: app:public.o, c: app:public.c}, lookup: {c: {on_missing: hold}}, sink: lake:s.d, sql: SELECT 1}\n" +
		"  e:\n    model: {sources: {o: app:public.o, c: app:public.c}, lookup: {c: {key: id, on_missing: skip}}, sink: lake:s.e, sql: SELECT 1}\n" +
		"  f:\n    model: {sources: {o: app:public.o, c: app:public.c}, lookup: [c], mode: replace, sink: lake:s.f, sql: SELECT 1}\n" +
		"  g:\n    model: {sources: {o: app:public.o, c: app:public.c}, mode: replace, sink: lake:s.g, sql: SELECT 1}\n", []string{
		"testdata/weir.yaml:7:13: tasks.a.model.sources: sources c, o are all read incrementally: a join would see only the new rows of each side, and rows whose match arrived in another run are lost; declare all but one as lookup: {name: {key: [column]}} (read whole every run), or use mode: replace (re-read fully); a SQL that never joins them (a UNION ALL) declares independent: true",
		"testdata/weir.yaml:9:13: tasks.b.model.sources: sources c, o are all read incrementally: a join would see only the new rows of each side, and rows whose match arrived in another run are lost; declare all but one as lookup: {name: {key: [column]}} (read whole every run), or use mode: replace (re-read fully); a SQL that never joins them (a UNION ALL) declares independent: true",
		"testdata/weir.yaml:11:66: tasks.c.model.lookup: lookup needs the join key of each lookup, so rows with no match are held instead of lost: write lookup: {c: {key: [column], on_missing: hold}} (hold waits for the lookup row, drop lets the SQL's join drop it)",
		"testdata/weir.yaml:13:67: tasks.d.model.lookup.c: lookup c needs key: (the join's columns, named alike in both tables), so weir can find rows with no match",
		"testdata/weir.yaml:15:92: tasks.e.model.lookup.c.on_missing: bad on_missing \"skip\"; allowed: hold, drop",
	}},
	{"tags", head + "  a:\n    transfer: {from: app, table: public.x, to: lake}\n    tags: [ok, 'not ok']\n", []string{
		"testdata/weir.yaml:8:11: tasks.a.tags: tag \"not ok\" is not allowed: use letters, digits, _ . and - (at most 63)",
	}},
}
