/**
 * `Catalog`: schemas, tables and databases of a connection, and
 * `TableDefinition`, the shape tables are created from and described as.
 */
import { native, type NativeConnection, type TableDef, type TableRef } from './native'
import { call, callSync, ErrorCode, HyperError, invalidArgument } from './errors'
import {
  booleanOf,
  checkKeys,
  checkOptions,
  checkRecord,
  flagOf,
  isRecord,
  kindOf,
  optionalString,
  shown,
  stringOf,
} from './options'

/** A name with the database and schema it is in, where known: what the catalog lists. */
export interface QualifiedName {
  database?: string | undefined
  schema?: string | undefined
  name: string
}

/** A table (or schema) name, optionally qualified: `'t'` or `{ schema: 's', name: 't' }`. */
export type TableName = string | QualifiedName

export interface ColumnDefinition {
  name: string
  /** The SQL type, e.g. `SqlType.varchar(10)` or `'VARCHAR(10)'`. */
  type: string
  /** Defaults to true. */
  nullable?: boolean | undefined
  collation?: string | undefined
}

export interface TableDefinition {
  name: TableName
  columns: ColumnDefinition[]
  /**
   * `temporary`: `CREATE TEMPORARY TABLE`, private to the session (schema
   * `pg_temp`) and gone with it. Default `permanent`. `getTableDefinition`
   * always says which.
   */
  persistence?: 'permanent' | 'temporary' | undefined
}

/** Every Hyper type, spelled as SQL. */
export const SqlType = {
  bool: () => 'BOOLEAN',
  smallInt: () => 'SMALLINT',
  int: () => 'INTEGER',
  bigInt: () => 'BIGINT',
  real: () => 'REAL',
  double: () => 'DOUBLE PRECISION',
  oid: () => 'OID',
  text: () => 'TEXT',
  varchar: (length: number) => checked(`VARCHAR(${checkInt(length)})`),
  char: (length: number) => checked(`CHAR(${checkInt(length)})`),
  json: () => 'JSON',
  bytes: () => 'BYTEA',
  geography: () => 'GEOGRAPHY',
  numeric: (precision: number, scale = 0) => checked(`NUMERIC(${checkInt(precision)},${checkInt(scale)})`),
  date: () => 'DATE',
  time: () => 'TIME',
  timestamp: () => 'TIMESTAMP',
  timestampTz: () => 'TIMESTAMP WITH TIME ZONE',
  interval: () => 'INTERVAL',
} as const

/** `type` if Hyper has it (as hyperd spells it), else a `HyperError` (22023) saying why. */
function checked(type: string): string {
  return callSync(() => native.canonicalType(type))
}

function checkInt(n: number): number {
  if (!Number.isInteger(n) || n < 0) {
    throw new HyperError({ code: ErrorCode.INVALID_PARAMETER_VALUE, message: `not a type length: ${shown(n)}` })
  }
  return n
}

export function tableRef(name: TableName): TableRef {
  if (typeof name === 'string') return { name }
  if (!isRecord(name) || typeof name.name !== 'string') {
    const what = isRecord(name) ? `an object whose name is ${kindOf(name.name)}` : kindOf(name)
    throw invalidArgument(`a table name is a string or { name, schema?, database? }, not ${what}`)
  }
  checkKeys(name, ['database', 'schema', 'name'], 'a table name')
  return { database: namePart(name.database, 'database'), schema: namePart(name.schema, 'schema'), name: name.name }
}

/** A name's optional part: `null` (as JSON carries an absent one) is absent. */
function namePart(part: unknown, what: string): string | undefined {
  if (part === undefined || part === null) return undefined
  if (typeof part !== 'string') throw invalidArgument(`a table name's ${what} is a string, not ${kindOf(part)}`)
  return part
}

/**
 * `t` for the native layer. Every definition passes here (`createTable`,
 * `new Inserter`, and the inserts given one), so its shape is checked here
 * once: a `null` definition or one without `columns` threw a TypeError.
 */
export function toDef(t: TableDefinition): TableDef {
  checkRecord(t, 'a table definition', '{ name, columns: [{ name, type }, ...] }')
  if (!Array.isArray(t.columns)) {
    throw invalidArgument(`a table definition's columns are an array of { name, type }, not ${kindOf(t.columns)}`)
  }
  checkKeys(t, ['name', 'columns', 'persistence'], 'a table definition')
  return {
    table: tableRef(t.name),
    columns: t.columns.map((c: unknown, i) => {
      checkRecord(c, `column ${i} of a table definition`, '{ name, type, nullable?, collation? }')
      checkKeys(c, ['name', 'type', 'nullable', 'collation'], `column ${i} of a table definition`)
      return {
        name: stringOf(c.name, `column ${i}'s name`),
        sqlType: stringOf(c.type, `column ${i}'s type`),
        nullable: c.nullable === undefined ? undefined : booleanOf(c.nullable, `column ${i}'s nullable`),
        collation: c.collation === undefined ? undefined : stringOf(c.collation, `column ${i}'s collation`),
      }
    }),
    persistence: t.persistence,
  }
}

export function fromDef(t: TableDef): TableDefinition {
  return {
    name: { database: t.table.database ?? undefined, schema: t.table.schema ?? undefined, name: t.table.name },
    columns: t.columns.map((c) => ({
      name: c.name,
      type: c.sqlType,
      nullable: c.nullable ?? true,
      ...(c.collation ? { collation: c.collation } : {}),
    })),
    persistence: t.persistence === 'temporary' ? 'temporary' : 'permanent',
  }
}

export class Catalog {
  /** `conn` gives the connection, or throws once it is closed. */
  constructor(private readonly conn: () => NativeConnection) {}

  private op(op: string, target?: TableName, name?: string) {
    return call(() => this.conn().catalog(op, target === undefined ? undefined : tableRef(target), name))
  }

  async createSchema(schema: TableName, options: { ifNotExists?: boolean } = {}): Promise<void> {
    checkOptions(options, ['ifNotExists'], 'catalog.createSchema')
    await this.op(flagOf(options.ifNotExists, 'ifNotExists') ? 'createSchemaIfNotExists' : 'createSchema', schema)
  }

  async hasSchema(schema: TableName): Promise<boolean> {
    return (await this.op('hasSchema', schema)).flag === true
  }

  /**
   * Schema names of `database`. Omitted, those of the connection's one
   * database: none once a second database is attached (hyperd then has no
   * default one, and Tableau's Hyper API lists none either), so name it.
   */
  async getSchemaNames(database?: string): Promise<QualifiedName[]> {
    const name = optionalString(database, 'the database name')
    return ((await this.op('getSchemaNames', name === undefined ? undefined : { name })).names ?? []).map((n) => ({
      database: n.database ?? undefined,
      name: n.name,
    }))
  }

  async createTable(table: TableDefinition, options: { ifNotExists?: boolean } = {}): Promise<void> {
    checkOptions(options, ['ifNotExists'], 'catalog.createTable')
    const ifNotExists = flagOf(options.ifNotExists, 'ifNotExists')
    await call(() => this.conn().createTable(toDef(table), ifNotExists))
  }

  /** Whether `table` exists; a bare name is looked up as in `getTableDefinition` (a temporary table counts). */
  async hasTable(table: TableName): Promise<boolean> {
    return (await this.op('hasTable', table)).flag === true
  }

  async dropTable(table: TableName, options: { ifExists?: boolean } = {}): Promise<void> {
    checkOptions(options, ['ifExists'], 'catalog.dropTable')
    await this.op(flagOf(options.ifExists, 'ifExists') ? 'dropTableIfExists' : 'dropTable', table)
  }

  /** The tables of `schema` (default `public`). */
  async getTableNames(schema: TableName = 'public'): Promise<QualifiedName[]> {
    return ((await this.op('getTableNames', schema)).names ?? []).map((n) => ({
      database: n.database ?? undefined,
      schema: n.schema ?? undefined,
      name: n.name,
    }))
  }

  /**
   * The table's columns as hyperd stores them (42P01 when it does not
   * exist). A bare name is looked up as a statement resolves it: a
   * temporary table first, then the search path. The definition names the
   * table in full, as Tableau's Hyper API does: `{ database, schema:
   * 'public', name }`, or `{ schema: 'pg_temp', name }` with `persistence:
   * 'temporary'`.
   */
  async getTableDefinition(table: TableName): Promise<TableDefinition> {
    const def = (await this.op('getTableDefinition', table)).table
    if (def === undefined) {
      throw new HyperError({ code: ErrorCode.UNDEFINED_TABLE, message: 'no table definition returned' })
    }
    return fromDef(def)
  }

  /**
   * The names (aliases) of the databases attached to this connection,
   * sorted: the one it opened, and those `attachDatabase` added.
   */
  async getDatabaseNames(): Promise<string[]> {
    return ((await this.op('getDatabaseNames')).names ?? []).map((n) => n.name)
  }

  /** Attaches the `.hyper` file at `path` as `alias`; `close()` detaches it. */
  async attachDatabase(path: string, alias: string): Promise<void> {
    const file = stringOf(path, 'the database path')
    await this.op('attachDatabase', stringOf(alias, 'the database alias'), file)
  }

  async detachDatabase(alias: string): Promise<void> {
    await this.op('detachDatabase', undefined, stringOf(alias, 'the database alias'))
  }

  async createDatabase(path: string, options: { ifNotExists?: boolean } = {}): Promise<void> {
    checkOptions(options, ['ifNotExists'], 'catalog.createDatabase')
    const op = flagOf(options.ifNotExists, 'ifNotExists') ? 'createDatabaseIfNotExists' : 'createDatabase'
    await this.op(op, undefined, stringOf(path, 'the database path'))
  }

  async dropDatabase(path: string, options: { ifExists?: boolean } = {}): Promise<void> {
    checkOptions(options, ['ifExists'], 'catalog.dropDatabase')
    const op = flagOf(options.ifExists, 'ifExists') ? 'dropDatabaseIfExists' : 'dropDatabase'
    await this.op(op, undefined, stringOf(path, 'the database path'))
  }
}
